import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as h}from"./chunk-VZG2J4RR.js";import{e as f}from"./chunk-R55TRQSJ.js";import{c}from"./chunk-QJ4UBJL7.js";import{d as u}from"./chunk-66HZQUHO.js";import"./chunk-JRCTXT7P.js";import{a as g}from"./chunk-AXYFIVHM.js";import{g as p,i as w,j as s}from"./chunk-IJTR45RD.js";import"./chunk-WV2TDCMY.js";import{existsSync as m}from"node:fs";import{join as v,relative as l,resolve as R}from"node:path";var S=`Usage: terfyn approve --run RUN_DIR --hash sha256:\u2026

Approve what a paused run is waiting for (a gated tool call, or an approve statement's value),
named by its content hash as \`terfyn run\` printed it. The approval is appended to the run's
approvals.jsonl only when the hash is exactly the one awaited; then resume with
\`terfyn run --resume RUN_DIR\`.

Options:
  --run RUN_DIR   the run directory
  --hash HASH     the hash printed when the run paused
  -h, --help      show this help
`;async function P(a,n){let{values:t,positionals:o}=g("approve",a,{run:{type:"string"},hash:{type:"string"}});if(t.help)return n.stdout(S),0;if(o.length>0)throw new w(`approve: unexpected argument \`${o[0]}\``);if(t.run===void 0||t.hash===void 0)throw new w("approve: --run RUN_DIR and --hash HASH are both required");let e=R(n.cwd,t.run);m(v(e,"run.json"))||await new u(e).readState();let i=c(n,e,"terfyn approve");try{return await b(e,t.hash,n,()=>i.verify())}finally{i.release()}}async function b(a,n,t,o){let e=await U(a,n,t);if(e!==void 0)return e;let i=new u(a);i.guard=o;let r=await i.readState();if(r.status!=="awaiting-approval"||!r.awaiting)throw new s(`run ${r.run_id} is not awaiting approval (its status is ${r.status}); nothing recorded`);if(n!==r.awaiting.hash)throw new s(`run ${r.run_id} awaits ${r.awaiting.hash}, not ${n}; nothing recorded`);await i.appendApproval({hash:n,approved_at:(t.now?.()??new Date).toISOString(),by:t.env.USER??t.env.USERNAME??"unknown"});let d=l(t.cwd,a)||a,y=r.awaiting.subject?h(r.awaiting.subject,{runDir:d}).map($=>`${$}
`).join(""):"";return t.stdout(`approved ${p(r.awaiting.label)} (${n}) in run ${p(r.run_id)}
${y}resume with: terfyn run --resume ${p(d)}
`),0}async function U(a,n,t){if(!m(v(a,"run.json")))return;let o=await f.open(a),e=await o.readState();if(e?.status!=="awaiting-approval"||!e.awaiting)throw new s(`the review run is not waiting at a gate (status ${e?.status??"none"}); nothing recorded`);if(n!==e.awaiting.hash)throw new s(`gate ${e.awaiting.gate} awaits ${e.awaiting.hash} (${e.awaiting.artifact}), not ${n}; nothing recorded`);await o.appendApproval({gate:e.awaiting.gate,hash:n,approved_at:(t.now?.()??new Date).toISOString(),by:t.env.USER??t.env.USERNAME??"unknown"});let i=l(t.cwd,a)||a;return t.stdout(`approved gate ${e.awaiting.gate}: ${e.awaiting.artifact} (${n})
resume with: terfyn review --resume ${i}
`),0}export{S as APPROVE_HELP,P as approveCommand};
