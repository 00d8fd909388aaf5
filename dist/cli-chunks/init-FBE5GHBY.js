import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as x}from"./chunk-LVCU3H5J.js";import{a as _,c as q}from"./chunk-WRZA6QMH.js";import"./chunk-4UQTPA76.js";import{a as $}from"./chunk-ADTHSNN7.js";import"./chunk-W577HZLE.js";import"./chunk-IMYZF3OE.js";import{c as I}from"./chunk-RL2HZJJC.js";import{a as A}from"./chunk-ZAGCDSVE.js";import{b as v,c as j}from"./chunk-HW2M4UAP.js";import"./chunk-P36XRWSR.js";import{a as d,b as T}from"./chunk-7P7T5M4R.js";import"./chunk-7426EPBT.js";import"./chunk-7CEOZYM2.js";import"./chunk-DHUJKWYY.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import{f as n}from"./chunk-YLFXO6J2.js";import"./chunk-FCTJB2H2.js";import"./chunk-7TZ6NXZM.js";import{existsSync as C}from"node:fs";import{mkdir as O,writeFile as E}from"node:fs/promises";import{basename as S,dirname as P,join as o,relative as h,resolve as U,sep as z}from"node:path";var F=`Usage: terfyn init [DIR]

Create a Terfyn project in DIR (default: .): terfyn.yaml, main.agent (one agent on the mock
model), tools.yaml (the workspace tool), schemas.yaml, policies.yaml, tests/capabilities.yaml,
and, at the repository's root, .github/workflows/terfyn.yml (the GitHub Action) and
.github/terfyn.yml (who may approve, and what fails). Nothing existing is overwritten. The new
project is validated and its capability tests run; then try \`terfyn plan --project DIR\`.

Options:
  -h, --help  show this help
`,G=r=>({"terfyn.yaml":`# The project: every .agent file and YAML resource below this directory belongs to it.
apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: ${r} }
spec:
  state: .terfyn/state.json
  runs: .terfyn/runs
`,"main.agent":`// One agent, bounded by its grants: it may read the workspace, and nothing else.
defaults {
  model "mock/gpt-4"
  maxTurns 8
}

tool workspace {}

agent Assistant {
  input Task
  output Task
  instructions "Read the files the task names and answer in the task's notes."
  grants {
    tool.workspace.read_file
  }
}

workflow Answer(input: Task) -> Task
effects { workspace.read }
{
  return Assistant(input)
}
`,"tools.yaml":`# The native workspace tool: each operation's effect is fixed by the adapter.
apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: workspace }
spec:
  adapter: workspace
  operations:
    read_file:
      effects: [workspace.read]
      idempotent: true
      input: { type: object, required: [path], properties: { path: { type: string } } }
    write_file:
      effects: [workspace.write]
      idempotent: true
      input: { type: object, required: [path, content], properties: { path: { type: string }, content: { type: string } } }
`,"schemas.yaml":`apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: Task }
spec:
  type: object
  required: [task]
  properties:
    task: { type: string }
    notes: { type: string }
`,"policies.yaml":`# Guards: a pull request that relaxes one needs an approval.
apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: guards }
spec:
  rules:
    - requireApproval: { effect: workspace.write }
    - maxLoopLimit: 5
`,"tests/capabilities.yaml":`# Checked by \`terfyn test\` with no model: the Assistant never writes.
apiVersion: terfyn.dev/v1
kind: CapabilityTest
metadata: { name: capabilities }
spec:
  assertions:
    - forbidEffect: { agent: Assistant, effect: workspace.write }
    - workflowEffects: { workflow: Answer, equals: [workspace.read] }
`}),R=`terfyn/terfyn@v${$.split(".")[0]}`;function H(r){return`# .github/workflows/terfyn.yml
name: terfyn
on:
  pull_request:
    types: [opened, synchronize, reopened, edited]   # edited: a new base is re-planned
  merge_group:
  issue_comment:
    types: [created]
concurrency:
  group: terfyn-\${{ github.event.pull_request.number || github.event.issue.number || github.ref }}
  cancel-in-progress: false
permissions: {}
jobs:
  plan:
    if: github.event_name != 'issue_comment'
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write   # the sticky comment
      issues: write          # comments live in the issues API
      checks: write          # check run with annotations
      statuses: write        # terfyn/approval
    steps:
      - uses: actions/checkout@v6   # the merge commit; the Action fetches base and head itself
      - id: terfyn
        uses: ${R}
        with:
          project: ${r}
  approve:
    if: github.event.issue.pull_request && contains(github.event.comment.body, '/terfyn approve')
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write   # the reply and the sticky comment
      issues: write
      checks: write
      statuses: write
    steps:
      - uses: actions/checkout@v6
      - uses: ${R}
        with:
          project: ${r}
`}var J=`# .github/terfyn.yml on the base branch: who may approve, and what fails
approvers: maintain
fail-on: widening
`;async function re(r,t){let{values:D,positionals:p}=A("init",r,{});if(D.help)return t.stdout(F),0;if(p.length>1)throw new v(`init: one directory at most, not ${p.length}`);I("init",{DIR:{value:p[0],what:"where the project is created"}});let s=U(t.cwd,p[0]??"."),c=h(t.cwd,s)||".",L=S(s).toLowerCase().replace(/[^a-z0-9-]+/g,"-").replace(/^-+|-+$/g,"")||"agents",l=G(L),y=Object.keys(l).filter(e=>C(o(s,e)));if(y.length>0)throw new j(`init: ${n(c)} already has ${y.map(e=>n(e)).join(", ")}; nothing was written (init never overwrites)`);let w=T(s)??s,V=h(d(w),d(s)).split(z).join("/")||".",N={".github/workflows/terfyn.yml":H(V),".github/terfyn.yml":J};for(let[e,u]of Object.entries(l))await O(P(o(s,e)),{recursive:!0}),await E(o(s,e),u,{flag:"wx"});let g=Object.keys(l).map(e=>o(c,e)),f=[];for(let[e,u]of Object.entries(N)){let a=o(w,e),b=h(t.cwd,a)||a;if(C(a)){f.push(b);continue}await O(P(a),{recursive:!0}),await E(a,u,{flag:"wx"}),g.push(b)}t.stdout(`Created:
${g.map(e=>`  ${n(e)}`).join(`
`)}
`),f.length>0&&t.stdout(`Left as they are (they exist):
${f.map(e=>`  ${n(e)}`).join(`
`)}
`);let i=await _(t,s),k=i.diagnostics.filter(e=>e.severity==="error");q(t,i,i.diagnostics);let m=x(i.validation);return k.length>0||m.failed>0?(t.stderr(`terfyn init: the new project does not validate (${k.length} errors, ${m.failed} failed assertions); please report this
`),1):(t.stdout(`
Valid: ${i.validation.project.agents.size} agent, ${m.passed} capability assertions pass.
Next: terfyn plan --project ${n(c)}
`),0)}export{F as INIT_HELP,H as actionWorkflow,re as initCommand};
