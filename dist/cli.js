import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as m}from"./cli-chunks/chunk-UHCSNP3N.js";import{a as i,c,d as p}from"./cli-chunks/chunk-PN36CQ7I.js";import"./cli-chunks/chunk-VWC3CUU7.js";import"./cli-chunks/chunk-WV2TDCMY.js";import{createInterface as w}from"node:readline/promises";var s={validate:{summary:"check a project's .agent files and YAML resources",run:(t,e)=>import("./cli-chunks/validate-ZTTA2BLM.js").then(r=>r.validateCommand(t,e))},plan:{summary:"show what would change, above all in agents' authority",run:(t,e)=>import("./cli-chunks/plan-HZGOPOGR.js").then(r=>r.planCommand(t,e))},apply:{summary:"record the resources and effect bounds in the state file",run:(t,e)=>import("./cli-chunks/apply-NQQGL53R.js").then(r=>r.applyCommand(t,e))},test:{summary:"check capability assertions over the effect bounds, with no model",run:(t,e)=>import("./cli-chunks/test-ZPOALMKG.js").then(r=>r.testCommand(t,e))},run:{summary:"execute a workflow: capability gate, sandbox, journal, resume",run:(t,e)=>import("./cli-chunks/run-RV6TX5JI.js").then(r=>r.runCommand(t,e))},approve:{summary:"approve what a paused run awaits, by its content hash",run:(t,e)=>import("./cli-chunks/approve-AJJU3DDX.js").then(r=>r.approveCommand(t,e))},runs:{summary:"list runs, or show one run's state and journal",run:(t,e)=>import("./cli-chunks/runs-DCGDXCUE.js").then(r=>r.runsCommand(t,e))},review:{summary:"answer and fix review comments from a request file (local mode)",run:(t,e)=>import("./cli-chunks/review-REMROXEL.js").then(r=>r.reviewCommand(t,e))}};function d(){let t=Math.max(...Object.keys(s).map(e=>e.length));return`terfyn ${m}: deterministic, bounded control around nondeterministic AI agents

Usage: terfyn <command> [options]

Commands:
${Object.entries(s).map(([e,r])=>`  ${e.padEnd(t)}  ${r.summary}`).join(`
`)}

Run \`terfyn <command> --help\` for a command's options.
`}async function f(t,e){let[r,...o]=t,y=t.includes("--debug");if(r===void 0||r==="--help"||r==="-h"||r==="help")return r==="help"&&o[0]&&s[o[0]]?f([o[0],"--help"],e):(e.stdout(d()),r===void 0?1:0);if(r==="--version"||r==="-v")return e.stdout(`${m}
`),0;let u=s[r];if(!u)return e.stderr(`terfyn: unknown command \`${i(r)}\`

${d()}`),1;try{return await u.run(o,e)}catch(n){let a=i(String(n?.message??n),{multiline:!0});if(n instanceof c)return e.stderr(`terfyn ${a}
Run \`terfyn ${r} --help\` for usage.
`),1;if(await C(n))return e.stderr(`terfyn ${r}: ${a}
`),1;let g=n;return e.stderr(`terfyn ${r}: internal error, please report: ${a}
`),y?e.stderr(`${g?.stack??""}
`):e.stderr(`(run again with --debug to see the stack trace)
`),1}}async function C(t){return t instanceof p?!0:(await Promise.all([import("./cli-chunks/read-project-6XBRFQTQ.js").then(r=>r.ProjectNotFoundError),import("./cli-chunks/state-file-FXWO5OHG.js").then(r=>r.StateFileError),import("./cli-chunks/run-store-3XLNQIRS.js").then(r=>r.RunDirectoryError),import("./cli-chunks/model-script-6MTL5RVA.js").then(r=>r.ModelScriptError),import("./cli-chunks/tool-router-YIWMXJTW.js").then(r=>r.ToolSetupError),import("./cli-chunks/read-revision-3GFZOOOF.js").then(r=>r.GitRevisionError)])).some(r=>t instanceof r)}function l(t){let e=!0;return t.on("error",()=>{e=!1}),r=>{e&&t.write(r)}}async function h(t){return f(t,{stdout:l(process.stdout),stderr:l(process.stderr),cwd:process.cwd(),env:process.env,isTTY:!!process.stdout.isTTY,...process.stdin.isTTY?{prompt:async e=>{let r=w({input:process.stdin,output:process.stderr});try{return await r.question(e)}finally{r.close()}}}:{}})}process.exitCode=await h(process.argv.slice(2));
