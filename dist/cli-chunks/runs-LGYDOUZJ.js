import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as E}from"./chunk-DQ6IHHCE.js";import{a as y}from"./chunk-47WZ2WBW.js";import"./chunk-UOG3TGML.js";import"./chunk-HACHNXH4.js";import"./chunk-BUSIXZ24.js";import{d as S}from"./chunk-QI2KNCS3.js";import"./chunk-OR6N6DE3.js";import{a as x}from"./chunk-4XN5NKAZ.js";import{a as o,c}from"./chunk-PN36CQ7I.js";import"./chunk-UCBMOY5M.js";import"./chunk-SHCKTKL2.js";import"./chunk-CRHX2DYB.js";import"./chunk-PMPGV4OQ.js";import"./chunk-ML6YJ7H3.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-VWC3CUU7.js";import"./chunk-YFUMW23J.js";import"./chunk-WV2TDCMY.js";import{readdir as T}from"node:fs/promises";import{join as $,relative as v,resolve as R}from"node:path";var k=`Usage: terfyn runs list [--project DIR] [--format text|json]
       terfyn runs show RUN_DIR [--format text|json]

list: every run under the project's runs directory: id, workflow, status, iteration, start.
show: one run's state (status, iteration, cursor), what it awaits shown whole (a gated call's
operation and every input field; an approve statement's value; a long value folded with its
size and sha256), a count of its journal events by type, then its last events.
With --format json: the same as a document with format_version "1"; show's holds the state,
the awaited item and every journal event in full.

Options:
  --project DIR     the directory holding terfyn.yaml (default: .)
  --format FORMAT   text (default) or json
  --json            same as --format json
  -h, --help        show this help
`,I=8,_=160;async function L(m,r){let{values:i,positionals:h}=x("runs",m,{project:{type:"string"},format:{type:"string"},json:{type:"boolean"}});if(i.help||h.length===0)return r.stdout(k),i.help?0:1;let p=i.json?"json":i.format??"text";if(p!=="text"&&p!=="json")throw new c(`runs: --format must be text or json, not \`${p}\``);let[j,g,b]=h;if(j==="list"){if(g!==void 0)throw new c(`runs list: unexpected argument \`${g}\``);let f=await S(r,i.project),s=R(f.root,f.validation.project.settings.runsPath),t=[];try{t=(await T(s,{withFileTypes:!0})).filter(e=>e.isDirectory()).map(e=>e.name).sort()}catch{t=[]}let a=[],u=[];for(let e of t)try{let n=await new y($(s,e)).readState();a.push({dir:$(s,e),run_id:n.run_id,workflow:n.workflow,status:n.status,iteration:n.iteration,started_at:n.started_at,updated_at:n.updated_at,...n.awaiting?{awaiting:{hash:n.awaiting.hash,label:n.awaiting.label}}:{},...n.error?{error:n.error}:{}})}catch{u.push($(s,e))}if(p==="json")return r.stdout(`${JSON.stringify({format_version:"1",runs_dir:s,runs:a,not_runs:u},null,2)}
`),0;if(t.length===0)return r.stdout(`no runs in ${o(v(r.cwd,s)||s)}
`),0;for(let e of a)r.stdout(`${o(`${e.run_id}  ${e.workflow}  ${e.status}  iteration ${e.iteration}  started ${e.started_at}`)}
`);for(let e of u)r.stdout(`${o(v(s,e))}  (not a run directory)
`);return 0}if(j==="show"){if(g===void 0)throw new c("runs show: name the run directory");if(b!==void 0)throw new c(`runs show: unexpected argument \`${b}\``);let f=R(r.cwd,g),s=new y(f),t=await s.readState(),a=await s.readJournal(),u=new Map;for(let l of a)u.set(l.type,(u.get(l.type)??0)+1);let e=t.awaiting?t.awaiting.subject??J(a,t.awaiting):void 0;if(p==="json")return r.stdout(`${JSON.stringify({format_version:"1",dir:f,state:t,awaiting:t.awaiting?{...t.awaiting,...e?{subject:e}:{}}:null,journal:{events:a.length,by_type:Object.fromEntries(u)},events:a},null,2)}
`),0;let n=v(r.cwd,f)||f,d=[`run ${t.run_id}: workflow ${t.workflow}`,`status: ${t.status}`,`iteration: ${t.iteration}`,`cursor: ${t.cursor||"(start)"}`,`ir: ${t.ir_hash}`,`started: ${t.started_at}; updated: ${t.updated_at}`].map(l=>o(l));t.awaiting&&(d.push(`awaiting approval: ${o(t.awaiting.label)} (${o(t.awaiting.hash)})`),e?d.push(...E(e,{runDir:n})):d.push("  (this run was paused before Terfyn recorded what is awaited; see its journal)"),d.push(`  approve with: terfyn approve --run ${o(n)} --hash ${o(t.awaiting.hash)}`)),t.error&&d.push(`error: ${o(t.error)}`),d.push(`journal: ${a.length} events (${o([...u].map(([l,w])=>`${l} ${w}`).join(", "))})`);for(let l of a.slice(-I)){let w=JSON.stringify(l);d.push(`  ${o(w.slice(0,_))}${w.length>_?`\u2026 (${w.length-_} more characters: --format json shows every event whole)`:""}`)}return r.stdout(`${d.join(`
`)}
`),0}throw new c(`runs: unknown subcommand \`${j}\` (list or show)`)}function J(m,r){for(let i=m.length-1;i>=0;i--){let h=m[i];if(h?.type==="approval.requested"&&h.hash===r.hash&&h.step===r.step)return h.subject}}export{k as RUNS_HELP,L as runsCommand};
