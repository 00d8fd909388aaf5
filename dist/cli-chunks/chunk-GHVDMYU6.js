import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{appendFileSync as i}from"node:fs";function a(e,r){let n=process.env.TERFYN_BENCH_SPAWN_LOG;if(!n)return;let t=performance.now();return()=>{let o={kind:e,what:r,ms:performance.now()-t};try{i(n,`${JSON.stringify(o)}
`)}catch{}}}export{a};
