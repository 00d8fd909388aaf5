import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as g}from"./chunk-YDGBC7QA.js";import{a as C}from"./chunk-VFODJ564.js";import{a as I}from"./chunk-IMYZF3OE.js";import{a as h,c as b,e as j}from"./chunk-RL2HZJJC.js";import{a as x}from"./chunk-ZAGCDSVE.js";import{a as k,b as p,c as $}from"./chunk-HW2M4UAP.js";import{b as D}from"./chunk-P36XRWSR.js";import"./chunk-7P7T5M4R.js";import"./chunk-7426EPBT.js";import{A as f,w as v}from"./chunk-7CEOZYM2.js";import"./chunk-DHUJKWYY.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import{f as a}from"./chunk-YLFXO6J2.js";import"./chunk-FCTJB2H2.js";import{e as S}from"./chunk-7TZ6NXZM.js";var E=S(C(),1);import{readFile as L}from"node:fs/promises";import{relative as P,resolve as u}from"node:path";var R=`Usage: terfyn fmt [--check] [--project DIR] [FILE...]
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
`;async function B(F,e){let{values:i,positionals:c}=x("fmt",F,{project:{type:"string"},check:{type:"boolean"}});if(i.help)return e.stdout(R),0;let l=i.check===!0,y=(t,r,o)=>I(t,{sources:new Map([[r,new v(r,o)]]),displayPath:n=>n,color:k(e)});if(c.includes(h)){if(c.length>1)throw new p("fmt: `-` formats standard input alone; give no other file with it");let t=await j(e,"fmt"),r=g(h,t);return r.ok?l?r.changed?1:0:(e.stdout(r.text),0):(e.stderr(`${y(r.diagnostics,h,t)}
`),1)}b("fmt",{"--project":{value:i.project,what:"the directory holding terfyn.yaml"}});let m;if(c.length>0){if(i.project!==void 0)throw new p("fmt: give either --project DIR or files, not both");m=c.map(t=>{if(!t.endsWith(".agent"))throw new p(`fmt: ${a(t)} is not an .agent file (only .agent files are formatted)`);return{path:u(e.cwd,t),display:t}})}else{let t=u(e.cwd,i.project??".");m=(await D(t)).files.filter(o=>o.path.endsWith(".agent")).map(o=>{let n=u(t,o.path);return{path:n,display:P(e.cwd,n)||o.path}})}let s=0,d=0;for(let t of m){let r;try{r=await L(t.path,"utf8")}catch(n){throw new $(`fmt: cannot read ${a(t.display)}: ${n.code??String(n)}`)}let o=g(t.display,r);if(!o.ok){d++,e.stderr(`${y(o.diagnostics,t.display,r)}
${a(t.display)}: not formatted (it does not parse)

`);continue}o.changed&&(s++,l?e.stdout(`${a(t.display)}
`):(await(0,E.default)(t.path,o.text),e.stdout(`formatted ${a(t.display)}
`)))}let w=f(m.length-s-d,"file"),T=l?`${f(s,"file")} not formatted, ${w} formatted`:`${f(s,"file")} formatted, ${w} unchanged`;return e.stderr(`terfyn fmt: ${T}${d>0?`, ${f(d,"file")} that do not parse`:""}
`),d>0||l&&s>0?1:0}export{R as FMT_HELP,B as fmtCommand};
