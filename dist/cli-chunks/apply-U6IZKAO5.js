import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as b}from"./chunk-C645PJDK.js";import{a as y}from"./chunk-UHCSNP3N.js";import{a as g,d as v}from"./chunk-AVQDSUJB.js";import"./chunk-HACHNXH4.js";import"./chunk-BUSIXZ24.js";import{c as j,e as $,f as I,g as P,h as x}from"./chunk-4ZA57EWX.js";import"./chunk-W577HZLE.js";import"./chunk-A7KLR7C2.js";import{a as m}from"./chunk-SA4SSYIP.js";import{f as c,g as f,h as l,i as u}from"./chunk-SRF25IFE.js";import"./chunk-GFW4UMHK.js";import"./chunk-7P7T5M4R.js";import{j as w}from"./chunk-QTSHRPE7.js";import"./chunk-PMPGV4OQ.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import"./chunk-YFUMW23J.js";import"./chunk-WV2TDCMY.js";import{relative as A}from"node:path";var E=`Usage: terfyn apply --project DIR [--auto-approve] [--plan-hash sha256:\u2026] [--state FILE]

Record the project's resources and effect bounds in the state file, so later plans show what
changed since. Prints the plan first. Needs one of:
  --plan-hash H   apply only if the recomputed plan's hash is exactly H (from \`terfyn plan\`);
                  otherwise refuse and leave the state untouched
  --auto-approve  apply whatever the plan is
or, on a terminal, typing "yes" at the prompt.

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --state FILE    the state file (default: the project's spec.state, .terfyn/state.json)
  -h, --help      show this help
`;async function V(S,e){let{values:a,positionals:h}=m("apply",S,{project:{type:"string"},state:{type:"string"},"auto-approve":{type:"boolean"},"plan-hash":{type:"string"}});if(a.help)return e.stdout(E),0;if(h.length>0)throw new l(`apply: unexpected argument \`${h[0]}\` (use --project DIR)`);let r=a["plan-hash"];if(r!==void 0&&!/^sha256:[0-9a-f]{64}$/.test(r))throw new l("apply: --plan-hash takes a plan hash as printed by `terfyn plan`: sha256: and 64 hex digits");let n=await j(e,a.project),s=await P(e,n,{state:a.state}),p=await x(e,n,s);if(!p.ok)return $(e,n,n.diagnostics),e.stderr(`terfyn apply: ${c(n.where)} has ${w(p.blocking.length,"error")}; nothing was applied
`),1;let t=p.plan;if(e.stdout(b(t,{color:f(e),priorName:s.name})),t.summary.forbidden)return e.stderr(`terfyn apply: the plan violates policy; nothing was applied
`),1;if(r!==void 0&&r!==t.hash)return e.stderr(`terfyn apply: the plan changed since it was approved; nothing was applied
  approved: ${r}
  current:  ${t.hash}
Review the new plan and approve its hash.
`),1;let o=I(e,n,a.state);if(!t.summary.has_changes&&s.state)return e.stdout(`
Apply complete: no changes; the state is up to date.
`),0;if(r===void 0&&!a["auto-approve"]){if(!e.prompt)throw new u("no terminal to confirm on: pass --plan-hash with the hash you reviewed, or --auto-approve");if((await e.prompt(`
Apply this plan? Only 'yes' is accepted: `)).trim()!=="yes")return e.stderr(`terfyn apply: not applied
`),1}let d=g({project:t.project,terfynVersion:y,previousSerial:s.state?.serial??0,planHash:t.hash,appliedAt:(e.now?.()??new Date).toISOString(),resources:p.resources});await v(o,d);let i=t.summary;return e.stdout(`
Apply complete: ${i.add} added, ${i.change} changed, ${i.destroy} destroyed. State: ${A(e.cwd,o)||o} (serial ${d.serial}).
`),0}export{E as APPLY_HELP,V as applyCommand};
