import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as h}from"./cli-chunks/chunk-AEK4Q4ZV.js";import{a as l}from"./cli-chunks/chunk-D54ZGEI5.js";import{c as p}from"./cli-chunks/chunk-QDYOWUXO.js";import{a as m}from"./cli-chunks/chunk-UHCSNP3N.js";import{b as d,e as f}from"./cli-chunks/chunk-FWLVEPOY.js";import"./cli-chunks/chunk-JRCTXT7P.js";import{K as c}from"./cli-chunks/chunk-KTMOB4EG.js";import{g as i,i as y,j as g}from"./cli-chunks/chunk-IJTR45RD.js";import"./cli-chunks/chunk-WV2TDCMY.js";import{createInterface as x}from"node:readline/promises";var s={validate:{summary:"check a project's .agent files and YAML resources",run:(t,e)=>import("./cli-chunks/validate-VZWK3HI6.js").then(r=>r.validateCommand(t,e))},plan:{summary:"show what would change, above all in agents' authority",run:(t,e)=>import("./cli-chunks/plan-3QDLGPC4.js").then(r=>r.planCommand(t,e))},apply:{summary:"record the resources and effect bounds in the state file",run:(t,e)=>import("./cli-chunks/apply-ESPU7MB3.js").then(r=>r.applyCommand(t,e))},test:{summary:"check capability assertions over the effect bounds, with no model",run:(t,e)=>import("./cli-chunks/test-IHFMG7A7.js").then(r=>r.testCommand(t,e))},run:{summary:"execute a workflow: capability gate, sandbox, journal, resume",run:(t,e)=>import("./cli-chunks/run-IMQ6KESN.js").then(r=>r.runCommand(t,e))},approve:{summary:"approve what a paused run awaits, by its content hash",run:(t,e)=>import("./cli-chunks/approve-XLU7D2N7.js").then(r=>r.approveCommand(t,e))},runs:{summary:"list runs, or show one run's state and journal",run:(t,e)=>import("./cli-chunks/runs-JGWV2FEI.js").then(r=>r.runsCommand(t,e))},review:{summary:"answer and fix review comments from a request file (local mode)",run:(t,e)=>import("./cli-chunks/review-MJOZOSLZ.js").then(r=>r.reviewCommand(t,e))}};function w(){let t=Math.max(...Object.keys(s).map(e=>e.length));return`terfyn ${m}: deterministic, bounded control around nondeterministic AI agents

Usage: terfyn <command> [options]

Commands:
${Object.entries(s).map(([e,r])=>`  ${e.padEnd(t)}  ${r.summary}`).join(`
`)}

Run \`terfyn <command> --help\` for a command's options.
`}async function v(t,e){let[r,...o]=t,$=t.includes("--debug");if(r===void 0||r==="--help"||r==="-h"||r==="help")return r==="help"&&o[0]&&s[o[0]]?v([o[0],"--help"],e):(e.stdout(w()),r===void 0?1:0);if(r==="--version"||r==="-v")return e.stdout(`${m}
`),0;let u=s[r];if(!u)return e.stderr(`terfyn: unknown command \`${i(r)}\`

${w()}`),1;try{return await u.run(o,e)}catch(n){let a=i(String(n?.message??n),{multiline:!0});if(n instanceof y)return e.stderr(`terfyn ${a}
Run \`terfyn ${r} --help\` for usage.
`),1;if(n instanceof g||n instanceof c||n instanceof d||n instanceof p||n instanceof l||n instanceof h||n instanceof f)return e.stderr(`terfyn ${r}: ${a}
`),1;let E=n;return e.stderr(`terfyn ${r}: internal error, please report: ${a}
`),$?e.stderr(`${E?.stack??""}
`):e.stderr(`(run again with --debug to see the stack trace)
`),1}}function C(t){let e=!0;return t.on("error",()=>{e=!1}),r=>{e&&t.write(r)}}async function b(t){return v(t,{stdout:C(process.stdout),stderr:C(process.stderr),cwd:process.cwd(),env:process.env,isTTY:!!process.stdout.isTTY,...process.stdin.isTTY?{prompt:async e=>{let r=x({input:process.stdin,output:process.stderr});try{return await r.question(e)}finally{r.close()}}}:{}})}process.exitCode=await b(process.argv.slice(2));
