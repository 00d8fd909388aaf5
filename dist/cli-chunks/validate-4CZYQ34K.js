import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{c as x,d as $,e as T,f as b}from"./chunk-A7KLR7C2.js";import{a as y}from"./chunk-SA4SSYIP.js";import{f as j,g as h,h as d}from"./chunk-SRF25IFE.js";import{b as v}from"./chunk-GFW4UMHK.js";import"./chunk-7P7T5M4R.js";import{c as w,j as e}from"./chunk-QTSHRPE7.js";import"./chunk-PMPGV4OQ.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import"./chunk-YFUMW23J.js";import"./chunk-WV2TDCMY.js";import{relative as D,resolve as I}from"node:path";var R=`Usage: terfyn validate --project DIR [--format text|json]

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
`;async function M(P,t){let{values:r,positionals:m}=y("validate",P,{project:{type:"string"},format:{type:"string"},json:{type:"boolean"}});if(r.help)return t.stdout(R),0;if(m.length>0)throw new d(`validate: unexpected argument \`${m[0]}\` (use --project DIR)`);let s=r.json?"json":r.format??"text";if(s!=="text"&&s!=="json")throw new d(`validate: --format must be text or json, not \`${s}\``);let k=r.project??".",c=I(t.cwd,k),f=await v(c),l=x(f.files),n=w([...f.diagnostics,...l.diagnostics]),u=a=>D(t.cwd,I(c,a))||a,{errors:p,warnings:i}=T(n);if(s==="json")return t.stdout(`${JSON.stringify(b(n,u),null,2)}
`),p>0?1:0;n.length>0&&t.stdout(`${$(n,{sources:l.project.sources,displayPath:u,color:h(t)})}

`);let o=l.project,A=[e(o.agents.size,"agent"),e(o.workflows.size,"workflow"),e(o.tools.size,"tool"),e(new Set(o.policies.map(a=>a.policy)).size,"policy","policies"),e(o.capabilityTests.length,"capability test")].join(", "),g=j(D(t.cwd,c)||".");return p>0?(t.stdout(`${g}: ${e(p,"error")}${i?`, ${e(i,"warning")}`:""}
`),1):(t.stdout(`${g}: project ${o.settings.name} is valid (${A})${i?`; ${e(i,"warning")}`:""}
`),0)}export{R as VALIDATE_HELP,M as validateCommand};
