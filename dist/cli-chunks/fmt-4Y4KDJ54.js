import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as g}from"./chunk-S2GA4236.js";import{a as S}from"./chunk-VFODJ564.js";import{a as D}from"./chunk-IMYZF3OE.js";import{a as h,c as x,e as b}from"./chunk-RL2HZJJC.js";import{a as $}from"./chunk-ZAGCDSVE.js";import{a as w,b as p,c as k}from"./chunk-HW2M4UAP.js";import{b as v}from"./chunk-YHAIBCYF.js";import"./chunk-7P7T5M4R.js";import"./chunk-XHYMUJNY.js";import{w as j,z as d}from"./chunk-BEGTXWK3.js";import"./chunk-DHUJKWYY.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import{f as s}from"./chunk-YLFXO6J2.js";import"./chunk-FCTJB2H2.js";import{e as T}from"./chunk-7TZ6NXZM.js";var I=T(S(),1);import{readFile as C}from"node:fs/promises";import{relative as L,resolve as u}from"node:path";var P=`Usage: terfyn fmt [--check] [--project DIR] [FILE...]
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
`;async function z(E,e){let{values:f,positionals:l}=$("fmt",E,{project:{type:"string"},check:{type:"boolean"}});if(f.help)return e.stdout(P),0;let m=f.check===!0,y=(t,r,o)=>D(t,{sources:new Map([[r,new j(r,o)]]),displayPath:n=>n,color:w(e)});if(l.includes(h)){if(l.length>1)throw new p("fmt: `-` formats standard input alone; give no other file with it");let t=await b(e,"fmt"),r=g(h,t);return r.ok?m?r.changed?1:0:(e.stdout(r.text),0):(e.stderr(`${y(r.diagnostics,h,t)}
`),1)}x("fmt",{"--project":{value:f.project,what:"the directory holding terfyn.yaml"}});let c;if(l.length>0){if(f.project!==void 0)throw new p("fmt: give either --project DIR or files, not both");c=l.map(t=>{if(!t.endsWith(".agent"))throw new p(`fmt: ${s(t)} is not an .agent file (only .agent files are formatted)`);return{path:u(e.cwd,t),display:t}})}else{let t=u(e.cwd,f.project??".");c=(await v(t)).files.filter(o=>o.path.endsWith(".agent")).map(o=>{let n=u(t,o.path);return{path:n,display:L(e.cwd,n)||o.path}})}let a=0,i=0;for(let t of c){let r;try{r=await C(t.path,"utf8")}catch(n){throw new k(`fmt: cannot read ${s(t.display)}: ${n.code??String(n)}`)}let o=g(t.display,r);if(!o.ok){i++,e.stderr(`${y(o.diagnostics,t.display,r)}
${s(t.display)}: not formatted (it does not parse)

`);continue}o.changed&&(a++,m?e.stdout(`${s(t.display)}
`):(await(0,I.default)(t.path,o.text),e.stdout(`formatted ${s(t.display)}
`)))}let F=m?`${d(a,"file")} not formatted, ${d(c.length-a-i,"file")} formatted`:`${d(a,"file")} formatted, ${d(c.length-a-i,"file")} unchanged`;return e.stderr(`terfyn fmt: ${F}${i>0?`, ${d(i,"file")} that do not parse`:""}
`),i>0||m&&a>0?1:0}export{P as FMT_HELP,z as fmtCommand};
