import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{closeSync as o,fsyncSync as a,openSync as s,writeSync as c}from"node:fs";import{readFile as u}from"node:fs/promises";function l(r,t){let n=s(r,"a");try{c(n,`${JSON.stringify(t)}
`),a(n)}finally{o(n)}}async function y(r){let t;try{t=await u(r,"utf8")}catch(n){if(n.code==="ENOENT")return[];throw n}return t.split(`
`).flatMap((n,i)=>{if(n.trim()==="")return[];try{return[{line:i+1,value:JSON.parse(n)}]}catch{return[]}})}var e=class extends Error{};export{l as a,y as b,e as c};
