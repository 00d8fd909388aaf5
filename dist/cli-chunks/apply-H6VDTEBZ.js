import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as D}from"./chunk-XTTYFDMK.js";import{a as j,e as $}from"./chunk-YMTHYEIZ.js";import"./chunk-HACHNXH4.js";import"./chunk-VFODJ564.js";import{a as I,c as P,d as S,e as b,f as x}from"./chunk-WRZA6QMH.js";import"./chunk-4UQTPA76.js";import{a as y}from"./chunk-ADTHSNN7.js";import"./chunk-W577HZLE.js";import"./chunk-IMYZF3OE.js";import{a as w,c as g}from"./chunk-RL2HZJJC.js";import{a as m}from"./chunk-ZAGCDSVE.js";import{a as f,b as o,c as u}from"./chunk-HW2M4UAP.js";import"./chunk-P36XRWSR.js";import"./chunk-7P7T5M4R.js";import"./chunk-7426EPBT.js";import{A as v}from"./chunk-7CEOZYM2.js";import"./chunk-DHUJKWYY.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import{f as c}from"./chunk-YLFXO6J2.js";import"./chunk-FCTJB2H2.js";import"./chunk-7TZ6NXZM.js";import{relative as E}from"node:path";var R=`Usage: terfyn apply --project DIR [--auto-approve] [--plan-hash sha256:\u2026] [--state FILE]

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
`;async function q(A,e){let{values:t,positionals:h}=m("apply",A,{project:{type:"string"},state:{type:"string"},"auto-approve":{type:"boolean"},"plan-hash":{type:"string"}});if(t.help)return e.stdout(R),0;if(h.length>0)throw new o(`apply: unexpected argument \`${h[0]}\` (use --project DIR)`);let r=t["plan-hash"];if(r!==void 0&&!/^sha256:[0-9a-f]{64}$/.test(r))throw new o("apply: --plan-hash takes a plan hash as printed by `terfyn plan`: sha256: and 64 hex digits");if(g("apply",{"--project":{value:t.project,what:"the directory holding terfyn.yaml"}}),t.state===w)throw new o("apply: --state -: apply reads the state file and then writes it, and standard input cannot be written; name the state file (`terfyn plan --state -` reads one from standard input)");let n=await I(e,t.project),s=await b(e,n,{state:t.state}),p=await x(e,n,s);if(!p.ok)return P(e,n,n.diagnostics),e.stderr(`terfyn apply: ${c(n.where)} has ${v(p.blocking.length,"error")}; nothing was applied
`),1;let a=p.plan;if(e.stdout(D(a,{color:f(e),priorName:s.name})),a.summary.forbidden)return e.stderr(`terfyn apply: the plan violates policy; nothing was applied
`),1;if(r!==void 0&&r!==a.hash)return e.stderr(`terfyn apply: the plan changed since it was approved; nothing was applied
  approved: ${r}
  current:  ${a.hash}
Review the new plan and approve its hash.
`),1;let i=S(e,n,t.state);if(!a.summary.has_changes&&s.state)return e.stdout(`
Apply complete: no changes; the state is up to date.
`),0;if(r===void 0&&!t["auto-approve"]){if(!e.prompt)throw new u("no terminal to confirm on: pass --plan-hash with the hash you reviewed, or --auto-approve");if((await e.prompt(`
Apply this plan? Only 'yes' is accepted: `)).trim()!=="yes")return e.stderr(`terfyn apply: not applied
`),1}let d=j({project:a.project,terfynVersion:y,previousSerial:s.state?.serial??0,planHash:a.hash,appliedAt:(e.now?.()??new Date).toISOString(),resources:p.resources});await $(i,d);let l=a.summary;return e.stdout(`
Apply complete: ${l.add} added, ${l.change} changed, ${l.destroy} destroyed. State: ${E(e.cwd,i)||i} (serial ${d.serial}).
`),0}export{R as APPLY_HELP,q as applyCommand};
