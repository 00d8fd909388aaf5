import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{c as $,d as D,e as T,f as b}from"./chunk-S5AXN42A.js";import{a as y,e as w}from"./chunk-FV2DRIXO.js";import{f as h,g as j,h as d}from"./chunk-SRF25IFE.js";import{b as x}from"./chunk-DMS3GOP2.js";import"./chunk-7P7T5M4R.js";import"./chunk-4N3YNCZQ.js";import{c as v,g as e}from"./chunk-3RDVYTCT.js";import"./chunk-PMPGV4OQ.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import"./chunk-YFUMW23J.js";import"./chunk-WV2TDCMY.js";import{relative as I,resolve as P}from"node:path";var z=`Usage: terfyn validate --project DIR [--format text|json]

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
`;async function B(k,t){let{values:r,positionals:m}=y("validate",k,{project:{type:"string"},format:{type:"string"},json:{type:"boolean"}});if(r.help)return t.stdout(z),0;if(m.length>0)throw new d(`validate: unexpected argument \`${m[0]}\` (use --project DIR)`);let s=r.json?"json":r.format??"text";if(s!=="text"&&s!=="json")throw new d(`validate: --format must be text or json, not \`${s}\``);w("validate",{"--project":{value:r.project,what:"the directory holding terfyn.yaml"}});let A=r.project??".",c=P(t.cwd,A),f=await x(c),l=$(f.files),n=v([...f.diagnostics,...l.diagnostics]),u=a=>I(t.cwd,P(c,a))||a,{errors:p,warnings:i}=T(n);if(s==="json")return t.stdout(`${JSON.stringify(b(n,u),null,2)}
`),p>0?1:0;n.length>0&&t.stdout(`${D(n,{sources:l.project.sources,displayPath:u,color:j(t)})}

`);let o=l.project,R=[e(o.agents.size,"agent"),e(o.workflows.size,"workflow"),e(o.tools.size,"tool"),e(new Set(o.policies.map(a=>a.policy)).size,"policy","policies"),e(o.capabilityTests.length,"capability test")].join(", "),g=h(I(t.cwd,c)||".");return p>0?(t.stdout(`${g}: ${e(p,"error")}${i?`, ${e(i,"warning")}`:""}
`),1):(t.stdout(`${g}: project ${o.settings.name} is valid (${R})${i?`; ${e(i,"warning")}`:""}
`),0)}export{z as VALIDATE_HELP,B as validateCommand};
