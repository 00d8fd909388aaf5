import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as D,b as T,c as b}from"./chunk-IMYZF3OE.js";import{c as v}from"./chunk-RL2HZJJC.js";import{a as w}from"./chunk-ZAGCDSVE.js";import{a as y,b as d}from"./chunk-HW2M4UAP.js";import{b as x}from"./chunk-P36XRWSR.js";import"./chunk-7P7T5M4R.js";import{y as $}from"./chunk-7426EPBT.js";import{A as e,c as j}from"./chunk-7CEOZYM2.js";import"./chunk-DHUJKWYY.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import{f as h}from"./chunk-YLFXO6J2.js";import"./chunk-FCTJB2H2.js";import"./chunk-7TZ6NXZM.js";import{relative as I,resolve as P}from"node:path";var z=`Usage: terfyn validate --project DIR [--format text|json]

Parse and check a Terfyn project: every .agent file and YAML resource below DIR
(except fixtures/, .terfyn/ and node_modules/). Prints each problem as
  path:line:col: error TF1234: message
with the source line, and exits 0 when the project is sound, 1 on any error.

Options:
  --project DIR     the directory holding terfyn.yaml (default: .)
  --format FORMAT   text (default) or json (format_version "1", ok, summary, diagnostics)
  --json            same as --format json
  --debug           show stack traces for internal errors
  -h, --help        show this help
`;async function B(k,t){let{values:s,positionals:m}=w("validate",k,{project:{type:"string"},format:{type:"string"},json:{type:"boolean"}});if(s.help)return t.stdout(z),0;if(m.length>0)throw new d(`validate: unexpected argument \`${m[0]}\` (use --project DIR)`);let n=s.json?"json":s.format??"text";if(n!=="text"&&n!=="json")throw new d(`validate: --format must be text or json, not \`${n}\``);v("validate",{"--project":{value:s.project,what:"the directory holding terfyn.yaml"}});let A=s.project??".",c=P(t.cwd,A),f=await x(c),l=$(f.files),i=j([...f.diagnostics,...l.diagnostics]),u=r=>I(t.cwd,P(c,r))||r,{errors:p,warnings:a}=T(i);if(n==="json")return t.stdout(`${JSON.stringify(b(i,u),null,2)}
`),p>0?1:0;i.length>0&&t.stdout(`${D(i,{sources:l.project.sources,displayPath:u,color:y(t)})}

`);let o=l.project,R=[e(o.agents.size,"agent"),e(o.workflows.size,"workflow"),e(o.tools.size,"tool"),e(new Set(o.policies.map(r=>r.policy)).size,"policy","policies"),e(o.capabilityTests.length,"capability test"),...[...o.hostAgents?.keys()??[]].map(r=>`host agent ${r}`)].join(", "),g=h(I(t.cwd,c)||".");return p>0?(t.stdout(`${g}: ${e(p,"error")}${a?`, ${e(a,"warning")}`:""}
`),1):(t.stdout(`${g}: project ${o.settings.name} is valid (${R})${a?`; ${e(a,"warning")}`:""}
`),0)}export{z as VALIDATE_HELP,B as validateCommand};
