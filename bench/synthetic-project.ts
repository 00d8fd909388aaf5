/**
 * A deterministic generator of large, valid Terfyn projects, for `npm run bench`.
 *
 * The generator builds the project as data first (agents, tools, workflows with statement
 * trees, policies), then renders it: `.agent` files and YAML resource documents.
 *
 * Everything is drawn from a seeded PRNG, so one seed always yields byte-identical files.
 * Validity is by construction: every name resolves, all schemas share the fields conditions
 * read, loop limits stay within the policy's maximum, workflows only call workflows with a
 * higher index (no recursion), and each workflow declares exactly its reachable effects.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";

export interface SyntheticOptions {
  seed: number;
  agents: number;
  tools: number;
  operationsPerTool: number;
  grantsPerAgent: number;
  workflows: number;
  agentFiles: number;
  toolFiles: number;
}

export const DEFAULT_OPTIONS: SyntheticOptions = {
  seed: 20240601,
  agents: 2000,
  tools: 100,
  operationsPerTool: 10,
  grantsPerAgent: 5,
  workflows: 200,
  agentFiles: 20,
  toolFiles: 10,
};

export interface GeneratedFile {
  path: string;
  text: string;
}

/** Writes generated files below `dir`, making their directories. */
export function writeGeneratedFiles(dir: string, files: readonly GeneratedFile[]): void {
  for (const f of files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
}

export interface SyntheticProject {
  files: GeneratedFile[];
  stats: {
    agents: number;
    tools: number;
    operations: number;
    grants: number;
    gatedGrants: number;
    workflows: number;
    workflowCalls: number;
    agentCalls: number;
    loops: number;
    schemas: number;
  };
}

// ── PRNG ──────────────────────────────────────────────────────────────────────────────────────

/** mulberry32: small, fast, and good enough to shuffle a benchmark. */
export function makeRng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const chance = (p: number): boolean => next() < p;
  const sample = <T>(xs: readonly T[], k: number): T[] => {
    const copy = [...xs];
    const out: T[] = [];
    for (let i = 0; i < k && copy.length > 0; i++) {
      const j = Math.floor(next() * copy.length);
      out.push(copy[j] as T);
      copy[j] = copy[copy.length - 1] as T;
      copy.pop();
    }
    return out;
  };
  return { next, int, pick, chance, sample };
}
type Rng = ReturnType<typeof makeRng>;

// ── Vocabulary ────────────────────────────────────────────────────────────────────────────────

/** ~20 effect classes. `secrets.write` is forbidden by policy and never granted. */
export const EFFECT_CLASSES = [
  "workspace.read",
  "workspace.write",
  "process.exec",
  "network.egress",
  "db.read",
  "db.write",
  "queue.publish",
  "queue.consume",
  "email.send",
  "secrets.read",
  "secrets.write",
  "cloud.read",
  "cloud.deploy",
  "payments.charge",
  "payments.refund",
  "storage.read",
  "storage.write",
  "issues.read",
  "issues.write",
  "chat.post",
] as const;
const FORBIDDEN_EVERYWHERE = "secrets.write";
const REQUIRES_APPROVAL = "payments.charge";
const MAX_LOOP_LIMIT = 10;

const TOOL_NOUNS = [
  "crm",
  "billing",
  "ledger",
  "tickets",
  "wiki",
  "chat",
  "mail",
  "calendar",
  "search",
  "storage",
  "registry",
  "deploy",
  "metrics",
  "alerts",
  "inventory",
  "shipping",
  "catalog",
  "payroll",
  "identity",
  "audit",
];
const OP_VERBS = [
  "list",
  "get",
  "create",
  "update",
  "delete",
  "search",
  "sync",
  "export",
  "import",
  "archive",
];
const OP_OBJECTS = [
  "records",
  "items",
  "entries",
  "events",
  "files",
  "accounts",
  "orders",
  "notes",
];
const ROLES = [
  "Planner",
  "Implementer",
  "Reviewer",
  "Triager",
  "Summarizer",
  "Researcher",
  "Auditor",
  "Releaser",
  "Notifier",
  "Archivist",
];
const WORDS =
  "the a task record request change report customer account ticket release build service queue entry file summary result status review draft policy budget owner team deadline".split(
    " ",
  );

interface SchemaDef {
  name: string;
  extra: Record<string, unknown>;
}
const SCHEMAS: SchemaDef[] = [
  {
    name: "Task",
    extra: {
      description: { type: "string" },
      priority: { type: "string", enum: ["low", "medium", "high"] },
    },
  },
  {
    name: "Draft",
    extra: { body: { type: "string" }, files: { type: "array", items: { type: "string" } } },
  },
  { name: "Review", extra: { feedback: { type: "string" }, issues: { type: "integer" } } },
  {
    name: "Ticket",
    extra: {
      customer: {
        type: "object",
        required: ["id"],
        properties: { id: { type: "string" }, tier: { type: "string" } },
      },
    },
  },
  { name: "Release", extra: { version: { type: "string" }, ratio: { type: "number" } } },
  {
    name: "Report",
    extra: { summary: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
  },
];
/** Fields every schema has, so conditions read them whatever the variable's schema. */
const COMMON_REQUIRED = ["title", "done", "approved", "score"];
const COMMON_PROPERTIES = {
  title: { type: "string" },
  done: { type: "boolean" },
  approved: { type: "boolean" },
  score: { type: "integer" },
};

// ── Model ─────────────────────────────────────────────────────────────────────────────────────

export type Expr =
  | { kind: "path"; parts: string[] }
  | { kind: "call"; callee: string; args: Expr[] }
  | { kind: "not"; operand: Expr }
  | { kind: "binary"; op: "&&" | "||" | "==" | "!="; left: Expr; right: Expr }
  | { kind: "string"; value: string }
  | { kind: "int"; value: number }
  | { kind: "bool"; value: boolean };

export type Stmt =
  | { kind: "assign"; target: string; value: Expr }
  | { kind: "while"; condition: Expr; limit: number; body: Stmt[] }
  | { kind: "if"; condition: Expr; thenBody: Stmt[]; elseBody?: Stmt[] }
  | { kind: "approve"; value: Expr; label?: string }
  | { kind: "return"; value: Expr };

interface Operation {
  name: string;
  effects: string[];
  idempotent: boolean;
  description: string;
  inputFields: string[];
}
interface Tool {
  name: string;
  operations: Operation[];
}
interface Grant {
  tool: string;
  operation: string;
  gated: boolean;
  effects: string[];
}
interface Agent {
  name: string;
  model?: string;
  maxTurns?: number;
  input: string;
  output: string;
  instructions: string;
  multiline: boolean;
  grants: Grant[];
  effects: Set<string>;
}
interface Workflow {
  name: string;
  param: string;
  paramType: string;
  returns: string;
  effects: string[];
  body: Stmt[];
  /** What the body calls: its effects are the union of theirs. */
  calledAgents: Agent[];
  subs: Workflow[];
}

/** The project as data, before rendering. */
interface Model {
  opts: SyntheticOptions;
  tools: Tool[];
  agents: Agent[];
  workflows: Workflow[];
  forbidPerAgent: { agent: string; effect: string }[];
  /** Per team (agent file): the operations its agents draw grants from. */
  teamGrantable: { tool: string; op: Operation }[][];
  agentsPerFile: number;
  workflowsPerFile: number;
  workflowCalls: number;
  agentCalls: number;
  loops: number;
}

// ── Generation ────────────────────────────────────────────────────────────────────────────────

export function generateSyntheticProject(
  opts: SyntheticOptions = DEFAULT_OPTIONS,
): SyntheticProject {
  return renderProject(buildModel(opts));
}

export interface GrantChangeSummary {
  /** Grants changed: added + removed + toAutonomous + toGated (one change per agent). */
  changed: number;
  added: number;
  removed: number;
  /** Mode flips `requires approval` → autonomous (each widens autonomous authority). */
  toAutonomous: number;
  /** Mode flips autonomous → `requires approval`. */
  toGated: number;
  agents: number;
  /** Workflows whose declared effects had to change (a removal took an effect out of reach). */
  workflowsWithNewEffects: number;
  /** Paths whose text differs between the two projects. */
  files: string[];
}

/**
 * The project, and the same project with `count` grants changed: one change on each of `count`
 * distinct agents (never the first five, which the capability test names): 40% added grants,
 * 30% removed grants, 30% mode flips (half `requires approval` -> autonomous, on agents drawn
 * from those holding such a grant; half autonomous -> gated). The changes come from their own
 * PRNG, so the base project is byte-identical to `generateSyntheticProject(opts)`.
 *
 * The changed project stays valid: an added grant is an operation of the agent's team whose
 * effects the agent already reaches when there is one (else any grantable operation), never
 * one reaching an effect a policy forbids the agent, and gated when it reaches the effect that
 * requires approval; such a grant is never flipped to autonomous; an agent keeps at least one
 * grant; and every workflow's declared effects are recomputed (exactly its reachable effects).
 */
export function generateGrantChange(
  opts: SyntheticOptions,
  count: number,
): { base: SyntheticProject; changed: SyntheticProject; change: GrantChangeSummary } {
  const m = buildModel(opts);
  const base = renderProject(m);
  const rng = makeRng((opts.seed ^ 0x9e3779b9) >>> 0);

  const forbidden = new Map<string, Set<string>>();
  for (const f of m.forbidPerAgent) {
    forbidden.set(f.agent, new Set([...(forbidden.get(f.agent) ?? []), f.effect]));
  }
  const summary: GrantChangeSummary = {
    changed: 0,
    added: 0,
    removed: 0,
    toAutonomous: 0,
    toGated: 0,
    agents: 0,
    workflowsWithNewEffects: 0,
    files: [],
  };
  const eligible = m.agents.map((a, i) => ({ a, i })).slice(5);
  if (count > eligible.length)
    throw new Error(`cannot change ${count} grants: only ${eligible.length} agents are eligible`);

  // A grant reaching the approval-required effect is never made autonomous.
  const promotable = (g: Grant) => g.gated && !g.effects.includes(REQUIRES_APPROVAL);
  const flip = (agent: Agent, toAutonomous: boolean): boolean => {
    const candidates = agent.grants.filter((g) => (toAutonomous ? promotable(g) : !g.gated));
    if (candidates.length === 0) return false;
    const g = rng.pick(candidates);
    g.gated = !toAutonomous;
    if (toAutonomous) summary.toAutonomous++;
    else summary.toGated++;
    return true;
  };
  const add = (agent: Agent, index: number): boolean => {
    const team = Math.floor(index / m.agentsPerFile);
    const held = new Set(agent.grants.map((g) => `${g.tool}.${g.operation}`));
    const banned = forbidden.get(agent.name) ?? new Set<string>();
    const candidates = (m.teamGrantable[team] ?? []).filter(
      ({ tool, op }) => !held.has(`${tool}.${op.name}`) && !op.effects.some((e) => banned.has(e)),
    );
    const quiet = candidates.filter(({ op }) => op.effects.every((e) => agent.effects.has(e)));
    const pool = quiet.length > 0 ? quiet : candidates;
    if (pool.length === 0) return false;
    const { tool, op } = rng.pick(pool);
    agent.grants.push({
      tool,
      operation: op.name,
      gated: op.effects.includes(REQUIRES_APPROVAL) || rng.chance(0.12),
      effects: op.effects,
    });
    summary.added++;
    return true;
  };
  const remove = (agent: Agent): boolean => {
    if (agent.grants.length < 2) return false;
    agent.grants.splice(rng.int(0, agent.grants.length - 1), 1);
    summary.removed++;
    return true;
  };

  // The quotas; the agents to promote a grant of are drawn from those that have one.
  const nAdd = Math.round(count * 0.4);
  const nRemove = Math.round(count * 0.3);
  const nFlip = count - nAdd - nRemove;
  const nToGated = Math.ceil(nFlip / 2);
  const promote = rng.sample(
    eligible.filter(({ a }) => a.grants.some(promotable)),
    nFlip - nToGated,
  );
  const promoted = new Set(promote.map(({ a }) => a));
  const rest = rng.sample(
    eligible.filter(({ a }) => !promoted.has(a)),
    count - promote.length,
  );
  const jobs: { a: Agent; i: number; kind: "add" | "remove" | "toGated" | "toAutonomous" }[] = [
    ...promote.map((x) => ({ ...x, kind: "toAutonomous" as const })),
    ...rest.map((x, k) => ({
      ...x,
      kind:
        k < nAdd
          ? ("add" as const)
          : k < nAdd + nRemove
            ? ("remove" as const)
            : ("toGated" as const),
    })),
  ];
  for (const { a, i, kind } of jobs) {
    const done =
      kind === "add"
        ? add(a, i) || flip(a, false)
        : kind === "remove"
          ? remove(a) || flip(a, false)
          : flip(a, kind === "toAutonomous") || add(a, i);
    if (!done) throw new Error(`could not change a grant of ${a.name}`);
    a.effects = new Set(a.grants.flatMap((g) => g.effects));
    summary.agents++;
  }
  summary.changed = summary.added + summary.removed + summary.toAutonomous + summary.toGated;

  // Callees have higher indices: recompute from the last workflow to the first.
  for (let w = m.workflows.length - 1; w >= 0; w--) {
    const wf = m.workflows[w] as Workflow;
    const reach = new Set<string>();
    for (const a of wf.calledAgents) for (const e of a.effects) reach.add(e);
    for (const s of wf.subs) for (const e of s.effects) reach.add(e);
    const effects = [...reach].sort();
    if (effects.join(",") !== wf.effects.join(",")) summary.workflowsWithNewEffects++;
    wf.effects = effects;
  }

  const changed = renderProject(m);
  const before = new Map(base.files.map((f) => [f.path, f.text]));
  summary.files = changed.files.filter((f) => before.get(f.path) !== f.text).map((f) => f.path);
  return { base, changed, change: summary };
}

function buildModel(opts: SyntheticOptions): Model {
  const rng = makeRng(opts.seed);
  const schemaNames = SCHEMAS.map((s) => s.name);

  // Tools and operations.
  const tools: Tool[] = [];
  for (let t = 0; t < opts.tools; t++) {
    const name = `${TOOL_NOUNS[t % TOOL_NOUNS.length]}_${String(Math.floor(t / TOOL_NOUNS.length)).padStart(2, "0")}`;
    const opNames = rng.sample(
      OP_VERBS.flatMap((v) => OP_OBJECTS.map((o) => `${v}_${o}`)),
      opts.operationsPerTool,
    );
    // A tool works in a few effect classes of its own; its operations draw from them.
    const home = rng.sample(
      EFFECT_CLASSES.filter((e) => e !== FORBIDDEN_EVERYWHERE),
      4,
    );
    const operations = opNames.map((opName, i) => {
      const effects: string[] = rng.sample(home, rng.int(1, 2));
      // A few operations carry the forbidden effect; no agent is ever granted them.
      if (i === 0 && t % 10 === 3) effects[effects.length - 1] = FORBIDDEN_EVERYWHERE;
      return {
        name: opName,
        effects,
        idempotent: opName.startsWith("get") || opName.startsWith("list") || rng.chance(0.3),
        description: sentence(rng, 6, 14),
        inputFields: rng.sample(["id", "query", "limit", "body", "owner", "cursor"], rng.int(0, 3)),
      } satisfies Operation;
    });
    tools.push({ name, operations });
  }
  const grantableOf = (ts: Tool[]) =>
    ts.flatMap((t) =>
      t.operations
        .filter((o) => !o.effects.includes(FORBIDDEN_EVERYWHERE))
        .map((o) => ({ tool: t.name, op: o })),
    );
  const grantable = grantableOf(tools);
  // Each team (one .agent file) works mostly with its own handful of tools.
  const agentsPerFile = Math.ceil(opts.agents / opts.agentFiles);
  const workflowsPerFile = Math.ceil(opts.workflows / opts.agentFiles);
  const teamTools = Math.max(1, Math.ceil(opts.tools / opts.agentFiles));
  const teamGrantable: ReturnType<typeof grantableOf>[] = [];
  for (let f = 0; f < opts.agentFiles; f++) {
    const own = Array.from(
      { length: teamTools + 3 },
      (_, i) => tools[(f * teamTools + i) % tools.length] as Tool,
    );
    teamGrantable.push(grantableOf([...new Set(own)]));
  }

  // Agents, with their grants.
  const agents: Agent[] = [];
  const teamAgents: Agent[][] = Array.from({ length: opts.agentFiles }, () => []);
  for (let a = 0; a < opts.agents; a++) {
    const team = Math.floor(a / agentsPerFile);
    const own = teamGrantable[team] ?? grantable;
    const chosen = rng.sample(rng.chance(0.1) ? grantable : own, opts.grantsPerAgent);
    const grants = chosen.map(({ tool, op }) => ({
      tool,
      operation: op.name,
      gated: op.effects.includes(REQUIRES_APPROVAL) || rng.chance(0.12),
      effects: op.effects,
    }));
    const agent: Agent = {
      name: `${ROLES[a % ROLES.length]}${String(a).padStart(4, "0")}`,
      input: rng.pick(schemaNames),
      output: rng.pick(schemaNames),
      instructions: sentence(rng, 20, 60),
      multiline: rng.chance(0.6),
      grants,
      effects: new Set(grants.flatMap((g) => g.effects)),
    };
    if (rng.chance(0.2))
      agent.model = rng.pick(["mock/gpt-4", "mock/script", "anthropic/claude-sonnet-5-5"]);
    if (rng.chance(0.3)) agent.maxTurns = rng.int(2, 20);
    agents.push(agent);
    teamAgents[team]?.push(agent);
  }

  // Workflow headers, then bodies from the last to the first: a workflow only calls workflows
  // with a higher index, so the call graph is acyclic and callees' effects are known.
  const workflows: Workflow[] = [];
  for (let w = 0; w < opts.workflows; w++) {
    workflows.push({
      name: `Flow${String(w).padStart(3, "0")}`,
      param: rng.pick(["input", "request", "job"]),
      paramType: rng.pick(schemaNames),
      returns: rng.pick(schemaNames),
      effects: [],
      body: [],
      calledAgents: [],
      subs: [],
    });
  }
  let workflowCalls = 0;
  let agentCalls = 0;
  let loops = 0;
  for (let w = opts.workflows - 1; w >= 0; w--) {
    const wf = workflows[w] as Workflow;
    const g = new BodyGen(rng, wf, teamAgents[Math.floor(w / workflowsPerFile)] ?? agents, agents);
    const subs =
      w < opts.workflows - 20 && rng.chance(0.35)
        ? rng.sample(workflows.slice(w + 1), rng.int(1, 2))
        : [];
    wf.body = g.body(subs);
    wf.calledAgents = [...g.calledAgents];
    wf.subs = subs;
    const reach = new Set<string>();
    for (const a of g.calledAgents) for (const e of a.effects) reach.add(e);
    for (const s of subs) for (const e of s.effects) reach.add(e);
    wf.effects = [...reach].sort();
    workflowCalls += subs.length;
    agentCalls += g.agentCallCount;
    loops += g.loopCount;
  }

  // Policy: every forbid is satisfied by construction.
  const forbidPerAgent: { agent: string; effect: string }[] = [];
  for (let i = 0; i < 8; i++) {
    const a = rng.pick(agents);
    const effect = EFFECT_CLASSES.find((e) => !a.effects.has(e) && e !== FORBIDDEN_EVERYWHERE);
    if (effect) forbidPerAgent.push({ agent: a.name, effect });
  }
  return {
    opts,
    tools,
    agents,
    workflows,
    forbidPerAgent,
    teamGrantable,
    agentsPerFile,
    workflowsPerFile,
    workflowCalls,
    agentCalls,
    loops,
  };
}

function renderProject(m: Model): SyntheticProject {
  const { opts, tools, agents, workflows, forbidPerAgent, agentsPerFile, workflowsPerFile } = m;
  const { workflowCalls, agentCalls, loops } = m;
  const files: GeneratedFile[] = [];
  files.push({
    path: "terfyn.yaml",
    text: `# Synthetic benchmark project (seed ${opts.seed}); generated by bench/synthetic-project.ts.\n${stringify(
      {
        apiVersion: "terfyn.dev/v1",
        kind: "Project",
        metadata: { name: "bench-synthetic" },
        spec: { state: ".terfyn/state.json", runs: ".terfyn/runs" },
      },
    )}`,
  });
  files.push({
    path: "schemas.yaml",
    text: SCHEMAS.map((s) =>
      stringify({
        apiVersion: "terfyn.dev/v1",
        kind: "Schema",
        metadata: { name: s.name },
        spec: {
          type: "object",
          required: COMMON_REQUIRED,
          properties: { ...COMMON_PROPERTIES, ...s.extra },
        },
      }),
    ).join("---\n"),
  });
  files.push({
    path: "policies.yaml",
    text: [
      {
        apiVersion: "terfyn.dev/v1",
        kind: "Policy",
        metadata: { name: "guardrails" },
        spec: {
          description: "Never write secrets; charges need a human; loops stay short.",
          rules: [
            { forbid: { agent: "*", effect: FORBIDDEN_EVERYWHERE } },
            { requireApproval: { effect: REQUIRES_APPROVAL } },
            { risk: { effect: "process.exec", level: "high" } },
            { risk: { effect: "cloud.deploy", level: "critical" } },
            { maxLoopLimit: MAX_LOOP_LIMIT },
          ],
        },
      },
      {
        apiVersion: "terfyn.dev/v1",
        kind: "Policy",
        metadata: { name: "separation-of-duties" },
        spec: { rules: forbidPerAgent.map((f) => ({ forbid: f })) },
      },
    ]
      .map((d) => stringify(d))
      .join("---\n"),
  });
  const toolsPerFile = Math.ceil(opts.tools / opts.toolFiles);
  for (let f = 0; f < opts.toolFiles; f++) {
    const docs = tools.slice(f * toolsPerFile, (f + 1) * toolsPerFile).map((t) =>
      stringify({
        apiVersion: "terfyn.dev/v1",
        kind: "Tool",
        metadata: { name: t.name },
        spec: {
          adapter: "external",
          description: `The ${t.name} service.`,
          operations: Object.fromEntries(
            t.operations.map((o) => [
              o.name,
              {
                effects: o.effects,
                idempotent: o.idempotent,
                description: o.description,
                input: {
                  type: "object",
                  required: o.inputFields.slice(0, 1),
                  properties: Object.fromEntries(
                    o.inputFields.map((k) => [k, { type: k === "limit" ? "integer" : "string" }]),
                  ),
                },
              },
            ]),
          ),
        },
      }),
    );
    if (docs.length > 0)
      files.push({
        path: `tools/tools-${String(f).padStart(2, "0")}.yaml`,
        text: docs.join("---\n"),
      });
  }
  const sampleWf = workflows.slice(0, 5);
  files.push({
    path: "tests/capabilities.yaml",
    text: stringify({
      apiVersion: "terfyn.dev/v1",
      kind: "CapabilityTest",
      metadata: { name: "capabilities" },
      spec: {
        assertions: [
          ...forbidPerAgent.map((f) => ({ forbidEffect: f })),
          ...agents.slice(0, 5).map((a) => ({
            allowEffect: {
              agent: a.name,
              effect: a.grants[0]?.effects[0] ?? "db.read",
              mode: "any",
            },
          })),
          ...sampleWf.map((w) => ({ workflowEffects: { workflow: w.name, equals: w.effects } })),
        ],
      },
    }),
  });

  for (let f = 0; f < opts.agentFiles; f++) {
    const path = `agents/team-${String(f).padStart(2, "0")}.agent`;
    const fileAgents = agents.slice(f * agentsPerFile, (f + 1) * agentsPerFile);
    const fileWorkflows = workflows.slice(f * workflowsPerFile, (f + 1) * workflowsPerFile);
    const first = f === 0;
    files.push({
      path,
      text: renderAgentFile(f, first ? tools : [], fileAgents, fileWorkflows, first),
    });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : 1));

  const grants = agents.reduce((n, a) => n + a.grants.length, 0);
  return {
    files,
    stats: {
      agents: agents.length,
      tools: tools.length,
      operations: tools.reduce((n, t) => n + t.operations.length, 0),
      grants,
      gatedGrants: agents.reduce((n, a) => n + a.grants.filter((g) => g.gated).length, 0),
      workflows: workflows.length,
      workflowCalls,
      agentCalls,
      loops,
      schemas: SCHEMAS.length,
    },
  };
}

function sentence(rng: Rng, min: number, max: number): string {
  const n = rng.int(min, max);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(rng.pick(WORDS));
  const s = words.join(" ");
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
}

/** Generates one workflow body, tracking variables and their schemas as the checker will. */
class BodyGen {
  readonly calledAgents = new Set<Agent>();
  agentCallCount = 0;
  loopCount = 0;
  private readonly vars = new Map<string, string>();
  private readonly byInput = new Map<string, Agent[]>();
  private readonly byPair = new Map<string, Agent[]>();
  private counter = 0;

  constructor(
    private readonly rng: Rng,
    private readonly wf: Workflow,
    team: Agent[],
    private readonly all: Agent[],
  ) {
    for (const a of team) {
      this.byInput.set(a.input, [...(this.byInput.get(a.input) ?? []), a]);
      const pair = `${a.input}>${a.output}`;
      this.byPair.set(pair, [...(this.byPair.get(pair) ?? []), a]);
    }
  }

  private fresh(prefix: string): string {
    this.counter++;
    return `${prefix}${this.counter}`;
  }

  /**
   * A team agent taking `input`, preferably returning `output`; now and then any agent of the
   * project (all schemas are structurally compatible, so that still type-checks).
   */
  private agentFor(input: string, output?: string): Agent {
    if (this.rng.chance(0.05)) return this.rng.pick(this.all);
    const exact = output ? this.byPair.get(`${input}>${output}`) : undefined;
    const pool = exact && exact.length > 0 ? exact : (this.byInput.get(input) ?? this.all);
    return this.rng.pick(pool);
  }

  private call(agent: Agent, arg: string): Expr {
    this.calledAgents.add(agent);
    this.agentCallCount++;
    return { kind: "call", callee: agent.name, args: [path(arg)] };
  }

  /** `target = Agent(arg)`; declares `target` with the agent's output schema when new. */
  private assignCall(target: string, arg: string, wantOutput?: string): Stmt {
    const agent = this.agentFor(this.vars.get(arg) as string, wantOutput ?? this.vars.get(target));
    if (!this.vars.has(target)) this.vars.set(target, agent.output);
    return { kind: "assign", target, value: this.call(agent, arg) };
  }

  private condition(v: string): Expr {
    const r = this.rng;
    switch (r.int(0, 4)) {
      case 0:
        return { kind: "not", operand: path(v, "approved") };
      case 1:
        return { kind: "not", operand: path(v, "done") };
      case 2:
        return {
          kind: "binary",
          op: "!=",
          left: path(v, "score"),
          right: { kind: "int", value: r.int(1, 9) },
        };
      case 3:
        return {
          kind: "binary",
          op: "&&",
          left: { kind: "not", operand: path(v, "done") },
          right: {
            kind: "binary",
            op: "==",
            left: path(v, "approved"),
            right: { kind: "bool", value: false },
          },
        };
      default:
        return {
          kind: "binary",
          op: "||",
          left: {
            kind: "binary",
            op: "!=",
            left: path(v, "title"),
            right: { kind: "string", value: "done" },
          },
          right: { kind: "not", operand: path(v, "approved") },
        };
    }
  }

  body(subs: Workflow[]): Stmt[] {
    const r = this.rng;
    const out: Stmt[] = [];
    const state = "state";
    this.vars.set(this.wf.param, this.wf.paramType);
    out.push({ kind: "assign", target: state, value: path(this.wf.param) });
    this.vars.set(state, this.wf.paramType);
    if (r.chance(0.2)) out.push({ kind: "approve", value: path(state), label: "start" });

    const sections = r.int(1, 3);
    for (let s = 0; s < sections; s++) {
      // A bounded loop: work on the state, optionally branch, then fold back into the state.
      const body: Stmt[] = [];
      const x = this.fresh("step");
      body.push(this.assignCall(x, state));
      let last = x;
      if (r.chance(0.6)) {
        const y = this.fresh("next");
        const thenB = [this.assignCall(y, x)];
        const elseB = r.chance(0.7) ? [this.assignCall(y, x)] : undefined;
        if (!elseB) {
          // Without an else branch, `y` might be unset; fold from `x` instead.
          body.push({ kind: "if", condition: this.condition(x), thenBody: thenB });
        } else {
          body.push({ kind: "if", condition: this.condition(x), thenBody: thenB, elseBody: elseB });
          last = y;
        }
      }
      if (r.chance(0.15))
        body.push({ kind: "approve", value: path(last), label: `round ${s + 1}` });
      body.push(this.assignCall(state, last, this.vars.get(state)));
      out.push({
        kind: "while",
        condition: this.condition(state),
        limit: r.int(1, MAX_LOOP_LIMIT),
        body,
      });
      this.loopCount++;
    }

    for (const sub of subs) {
      const t = this.fresh("sub");
      const stmt: Stmt = {
        kind: "assign",
        target: t,
        value: { kind: "call", callee: sub.name, args: [path(state)] },
      };
      this.vars.set(t, sub.returns);
      if (r.chance(0.5)) {
        const other = this.fresh("alt");
        const thenB = [stmt, this.assignCall(state, t, this.vars.get(state))];
        out.push({
          kind: "if",
          condition: this.condition(state),
          thenBody: thenB,
          elseBody: [this.assignCall(other, state)],
        });
      } else {
        out.push(stmt);
        out.push(this.assignCall(state, t, this.vars.get(state)));
      }
    }

    const result = this.fresh("result");
    out.push(this.assignCall(result, state, this.wf.returns));
    out.push({ kind: "return", value: path(result) });
    return out;
  }
}

function path(...parts: string[]): Expr {
  return { kind: "path", parts };
}

// ── Rendering: .agent ─────────────────────────────────────────────────────────────────────────

function renderAgentFile(
  index: number,
  bindings: Tool[],
  agents: Agent[],
  workflows: Workflow[],
  withDefaults: boolean,
): string {
  const out: string[] = [
    `// team-${String(index).padStart(2, "0")}: synthetic agents and workflows for the benchmark.`,
    "",
  ];
  if (withDefaults) out.push("defaults {", '  model "mock/gpt-4"', "  maxTurns 8", "}", "");
  for (const t of bindings) out.push(`tool ${t.name} {}`);
  if (bindings.length > 0) out.push("");
  for (const a of agents) {
    out.push(`// ${a.name}: ${a.grants.length} grants.`);
    out.push(`agent ${a.name} {`);
    if (a.model) out.push(`  model "${a.model}"`);
    if (a.maxTurns) out.push(`  maxTurns ${a.maxTurns}`);
    out.push(`  input ${a.input}`, `  output ${a.output}`);
    if (a.multiline) {
      out.push('  instructions """');
      for (const line of wrap(a.instructions, 80)) out.push(`    ${line}`);
      out.push('    """');
    } else out.push(`  instructions "${a.instructions}"`);
    out.push("  grants {");
    for (const g of a.grants)
      out.push(`    tool.${g.tool}.${g.operation}${g.gated ? " requires approval" : ""}`);
    out.push("  }", "}", "");
  }
  for (const w of workflows) {
    out.push(`workflow ${w.name}(${w.param}: ${w.paramType}) -> ${w.returns}`);
    out.push(`effects { ${w.effects.join(", ")} }`);
    out.push("{");
    renderBlock(w.body, "  ", out);
    out.push("}", "");
  }
  return out.join("\n");
}

function renderBlock(stmts: Stmt[], indent: string, out: string[]): void {
  for (const s of stmts) {
    switch (s.kind) {
      case "assign":
        out.push(`${indent}${s.target} = ${renderExpr(s.value)}`);
        break;
      case "while":
        out.push(`${indent}while ${renderExpr(s.condition)} limit ${s.limit} {`);
        renderBlock(s.body, `${indent}  `, out);
        out.push(`${indent}}`);
        break;
      case "if":
        out.push(`${indent}if ${renderExpr(s.condition)} {`);
        renderBlock(s.thenBody, `${indent}  `, out);
        if (s.elseBody) {
          out.push(`${indent}} else {`);
          renderBlock(s.elseBody, `${indent}  `, out);
        }
        out.push(`${indent}}`);
        break;
      case "approve":
        out.push(`${indent}approve ${renderExpr(s.value)}${s.label ? ` "${s.label}"` : ""}`);
        break;
      case "return":
        out.push(`${indent}return ${renderExpr(s.value)}`);
        break;
    }
  }
}

function renderExpr(e: Expr): string {
  switch (e.kind) {
    case "path":
      return e.parts.join(".");
    case "call":
      return `${e.callee}(${e.args.map(renderExpr).join(", ")})`;
    case "not":
      return `!${e.operand.kind === "binary" ? `(${renderExpr(e.operand)})` : renderExpr(e.operand)}`;
    case "binary": {
      const side = (x: Expr) => (x.kind === "binary" ? `(${renderExpr(x)})` : renderExpr(x));
      return `${side(e.left)} ${e.op} ${side(e.right)}`;
    }
    case "string":
      return JSON.stringify(e.value);
    case "int":
      return String(e.value);
    case "bool":
      return String(e.value);
  }
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = "";
  for (const word of text.split(" ")) {
    if (cur.length + word.length + 1 > width && cur !== "") {
      lines.push(cur);
      cur = word;
    } else cur = cur === "" ? word : `${cur} ${word}`;
  }
  if (cur !== "") lines.push(cur);
  return lines;
}
