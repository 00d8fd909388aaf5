import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as H}from"./chunk-BUSIXZ24.js";import{a as W}from"./chunk-IMYZF3OE.js";import{a as N,c as v,e as A,g as L}from"./chunk-DS7JHCAZ.js";import{a as O,b as $,c as C}from"./chunk-HW2M4UAP.js";import{b as R}from"./chunk-HMUWRO36.js";import"./chunk-7P7T5M4R.js";import"./chunk-ONEC26ST.js";import{D as T,E as P,w as h,z as g}from"./chunk-WFSICP3O.js";import"./chunk-PMPGV4OQ.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import{f as u}from"./chunk-YLFXO6J2.js";import"./chunk-YFUMW23J.js";import{d as M}from"./chunk-WV2TDCMY.js";var J=M(H(),1);import{readFile as V}from"node:fs/promises";import{relative as X,resolve as I}from"node:path";var G="  ";function U(e){let t=[],n=0;for(;n<e.length;){let d=e[n];if(d===`
`)t.push({kind:"newline"}),n++;else if(d==="/"&&e[n+1]==="/"){let f=e.indexOf(`
`,n);f<0&&(f=e.length),t.push({kind:"comment",text:e.slice(n,f).replace(/[ \t\r]+$/,"")}),n=f}else n++}return{items:t}}var _=new Set(["{","("]),q=new Set(["}",")"]);function z(e,t){return!(t.kind===","||t.kind===")"||t.kind==="."||t.kind===":"||e.kind==="("||e.kind==="."||e.kind==="!"||e.kind==="{"&&t.kind==="}"||t.kind==="("&&(e.kind==="ident"||e.kind===")"))}function B(e,t){let n=e.lastIndexOf(`
`,t-1)+1;return/^[ \t]*/.exec(e.slice(n))?.[0]??""}function K(e,t,n){if(!e.text.startsWith('"""')||!e.text.includes(`
`)||t===n)return e.text;let d=e.text.split(`
`),f=d.slice(1);if(!f.every(s=>s.trim()===""||s.startsWith(t)))return e.text;let p=[d[0],...f.map(s=>s.trim()===""?"":`${n}${s.slice(t.length)}`)].join(`
`);return T(new h("x.agent",p)).tokens[0]?.value===e.value?p:e.text}function D(e,t){let n=new h(e,t),d=T(n),p=P(n).diagnostics.filter(i=>i.severity==="error");if(p.length>0)return{ok:!1,diagnostics:p};let l=n.text,s=d.tokens.filter(i=>i.kind!=="eof"),m=t.includes(`\r
`)?`\r
`:`
`,k=[],r=0,a=0;for(let i of[...s,void 0]){for(let y of U(l.slice(r,i?.start??l.length)).items)y.kind==="newline"?a++:(k.push({nl:a,comment:y.text}),a=0);if(i===void 0)break;k.push({nl:a,tok:i}),a=0,r=i.end}let o=[],c,w=0,S=0,E=[],b=!1,x;for(let i of k){let y="tok"in i?i.tok:void 0,F=y!==void 0&&q.has(y.kind);if(F&&(w=E.pop()??0),c===void 0||i.nl>0?(c!==void 0&&o.push(c.replace(/[ \t]+$/,"")),i.nl>=2&&o.length>0&&!b&&!F&&o.push(""),S=w,c=G.repeat(S),x=void 0):("comment"in i||x!==void 0&&z(x,i.tok))&&(c+=" "),"comment"in i){c+=i.comment;continue}c+=K(i.tok,B(l,i.tok.start),G.repeat(S)),b=_.has(i.tok.kind),b&&(E.push(w),w++),x=i.tok}for(c!==void 0&&o.push(c.replace(/[ \t]+$/,""));o.length>0&&o.at(-1)==="";)o.pop();let j=o.length===0?"":`${o.join(m)}${m}`;return Q(l,j)?{ok:!0,text:j,changed:j!==t}:{ok:!0,text:t,changed:!1}}function Q(e,t){let n=d=>{let f=T(new h("x.agent",d)).tokens,p=[],l=0;for(let s of f){for(let m of U(d.slice(l,s.start)).items)m.kind==="comment"&&p.push(m.text);l=s.end}return JSON.stringify([f.map(s=>[s.kind,s.value]),p])};return n(e)===n(t)}var Y=`Usage: terfyn fmt [--check] [--project DIR] [FILE...]
       terfyn fmt -              (standard input to standard output)

Lay out .agent files one way: two spaces per open brace or parenthesis, one
space between words, at most one blank line, comments kept where they are, line
breaks kept where you put them. Formatting never changes what a file says: the
result is checked to hold the same tokens and comments, and a file that does
not parse is left as it is (its errors are printed, and the exit code is 1).

Without FILE, formats every .agent file of the project (as validate reads it).

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --check         change nothing; list the files that are not formatted and exit
                  1 when there is one (for CI)
  -h, --help      show this help

Exit codes: 0 formatted (or, with --check, nothing to format); 1 a file not
formatted (--check), a file that does not parse, or a usage error.
`;async function ut(e,t){let{values:n,positionals:d}=N("fmt",e,{project:{type:"string"},check:{type:"boolean"}});if(n.help)return t.stdout(Y),0;let f=n.check===!0,p=(r,a,o)=>W(r,{sources:new Map([[a,new h(a,o)]]),displayPath:c=>c,color:O(t)});if(d.includes(v)){if(d.length>1)throw new $("fmt: `-` formats standard input alone; give no other file with it");let r=await L(t,"fmt"),a=D(v,r);return a.ok?f?a.changed?1:0:(t.stdout(a.text),0):(t.stderr(`${p(a.diagnostics,v,r)}
`),1)}A("fmt",{"--project":{value:n.project,what:"the directory holding terfyn.yaml"}});let l;if(d.length>0){if(n.project!==void 0)throw new $("fmt: give either --project DIR or files, not both");l=d.map(r=>{if(!r.endsWith(".agent"))throw new $(`fmt: ${u(r)} is not an .agent file (only .agent files are formatted)`);return{path:I(t.cwd,r),display:r}})}else{let r=I(t.cwd,n.project??".");l=(await R(r)).files.filter(o=>o.path.endsWith(".agent")).map(o=>{let c=I(r,o.path);return{path:c,display:X(t.cwd,c)||o.path}})}let s=0,m=0;for(let r of l){let a;try{a=await V(r.path,"utf8")}catch(c){throw new C(`fmt: cannot read ${u(r.display)}: ${c.code??String(c)}`)}let o=D(r.display,a);if(!o.ok){m++,t.stderr(`${p(o.diagnostics,r.display,a)}
${u(r.display)}: not formatted (it does not parse)

`);continue}o.changed&&(s++,f?t.stdout(`${u(r.display)}
`):(await(0,J.default)(r.path,o.text),t.stdout(`formatted ${u(r.display)}
`)))}let k=f?`${g(s,"file")} not formatted, ${g(l.length-s-m,"file")} formatted`:`${g(s,"file")} formatted, ${g(l.length-s-m,"file")} unchanged`;return t.stderr(`terfyn fmt: ${k}${m>0?`, ${g(m,"file")} that do not parse`:""}
`),m>0||f&&s>0?1:0}export{Y as FMT_HELP,ut as fmtCommand};
