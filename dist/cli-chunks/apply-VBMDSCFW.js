import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as m}from"./chunk-UHCSNP3N.js";import{a as j,d as P}from"./chunk-2ATAM2D6.js";import"./chunk-HACHNXH4.js";import"./chunk-BUSIXZ24.js";import{a as g,b as v}from"./chunk-BX5IFLI2.js";import"./chunk-KGVIVA6Y.js";import{e as $,f as I,g as x,i as b,j as S,k as E}from"./chunk-6NUZW7MT.js";import"./chunk-S4I7B5M5.js";import"./chunk-JTFMTOM5.js";import{a as w}from"./chunk-EZW4S434.js";import{f as c,g as f,h as l,i as u}from"./chunk-27DMJV7S.js";import"./chunk-U4P7YJTK.js";import"./chunk-W577HZLE.js";import{i as y}from"./chunk-CFRH2OG6.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-PMPGV4OQ.js";import"./chunk-ML6YJ7H3.js";import"./chunk-YFUMW23J.js";import"./chunk-WV2TDCMY.js";import{relative as A}from"node:path";var D=`Usage: terfyn apply --project DIR [--auto-approve] [--plan-hash sha256:\u2026] [--state FILE]

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
`;async function q(R,e){let{values:r,positionals:h}=w("apply",R,{project:{type:"string"},state:{type:"string"},"auto-approve":{type:"boolean"},"plan-hash":{type:"string"}});if(r.help)return e.stdout(D),0;if(h.length>0)throw new l(`apply: unexpected argument \`${h[0]}\` (use --project DIR)`);let n=r["plan-hash"];if(n!==void 0&&!/^sha256:[0-9a-f]{64}$/.test(n))throw new l("apply: --plan-hash takes a plan hash as printed by `terfyn plan`: sha256: and 64 hex digits");let t=await x(e,r.project),s=await E(e,t,{state:r.state}),p=g(t.validation,s,I(t),await $(t));if(!p.ok)return b(e,t,t.diagnostics),e.stderr(`terfyn apply: ${c(t.where)} has ${y(p.blocking.length,"error")}; nothing was applied
`),1;let a=p.plan;if(e.stdout(v(a,{color:f(e),priorName:s.name})),a.summary.forbidden)return e.stderr(`terfyn apply: the plan violates policy; nothing was applied
`),1;if(n!==void 0&&n!==a.hash)return e.stderr(`terfyn apply: the plan changed since it was approved; nothing was applied
  approved: ${n}
  current:  ${a.hash}
Review the new plan and approve its hash.
`),1;let o=S(e,t,r.state);if(!a.summary.has_changes&&s.state)return e.stdout(`
Apply complete: no changes; the state is up to date.
`),0;if(n===void 0&&!r["auto-approve"]){if(!e.prompt)throw new u("no terminal to confirm on: pass --plan-hash with the hash you reviewed, or --auto-approve");if((await e.prompt(`
Apply this plan? Only 'yes' is accepted: `)).trim()!=="yes")return e.stderr(`terfyn apply: not applied
`),1}let d=j({project:a.project,terfynVersion:m,previousSerial:s.state?.serial??0,planHash:a.hash,appliedAt:(e.now?.()??new Date).toISOString(),resources:p.resources});await P(o,d);let i=a.summary;return e.stdout(`
Apply complete: ${i.add} added, ${i.change} changed, ${i.destroy} destroyed. State: ${A(e.cwd,o)||o} (serial ${d.serial}).
`),0}export{D as APPLY_HELP,q as applyCommand};
