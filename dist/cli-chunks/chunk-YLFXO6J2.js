import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
var u="[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\u115f\\u1160\\u3164\\uffa0]",c=new RegExp(u,"gu"),p="\u23CE";function l(e){let t=e.codePointAt(0)??0,n=t.toString(16).toUpperCase();return t>65535?`\\u{${n}}`:`\\u${n.padStart(4,"0")}`}function o(e,t=""){return e.replace(c,n=>t.includes(n)?n:n===`
`?p:l(n))}function g(e,t,n=!1){let r=n?new RegExp(`^[ \\t]*(${t}+)`,"gm"):new RegExp(`(${t}+)`,"g"),i=0;for(let s of e.matchAll(r))i=Math.max(i,s[1]?.length??0);return i}function $(e,t={}){let n=o(e);if(n==="")return"(empty)";t.inTable&&(n=n.replace(/\|/g,"\\|"));let r="`".repeat(g(n,"`")+1),i=n.trim()!==""&&(n.startsWith("`")||n.endsWith("`")||n.startsWith(" "))?" ":"";return`${r}${i}${n}${i}${r}`}function a(e){let t=o(e).replace(/[\\`*_{}[\]()#+\-.!|~<>&]/g,n=>`\\${n}`);return t=t.replace(/@/g,"@\u2060").replace(/:\/\//g,":\u2060//"),t=t.replace(/(w)(ww\\\.)/gi,"$1\u2060$2"),t}function d(e){return a(e)}function E(e,t="text",n={}){let r=o(e,`
	`),i=Math.max(g(r,"`",!0),g(r,"~",!0)),s="`".repeat(Math.max(n.minFence??3,i+1));return`${s}${o(t)}
${r.endsWith(`
`)?r:`${r}
`}${s}`}function b(e,t={}){return o(e,t.multiline?`
`:"")}var f=new RegExp(u,"gu"),x=new RegExp(`(?![\\t\\n])${u}`,"gu");function m(e){let t=e.codePointAt(0)??0;return e===`
`?"\\n":e==="	"?"\\t":t<=255?`\\x${t.toString(16).padStart(2,"0")}`:l(e)}function I(e,t={}){return e.replace(t.multiline?x:f,m)}export{$ as a,a as b,d as c,E as d,b as e,I as f};
