/**
 * The one escaper (src/core/render/escape.ts), context by context, and end to end: a pull
 * request whose Schema property key holds a live `<h2>`/`<img>` and whose agent instructions
 * hold a bidi override renders, on every surface (the sticky comment, the check run's summary
 * and text, the job summary, the Markdown and text plans, the annotations, JUnit), no HTML
 * element of its own and no raw invisible character: `\u202E` is shown instead.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { describe, expect, it } from "vitest";
import { clipText } from "../src/action/report-flow.ts";
import { writeJunitReport } from "../src/adapters/report/junit.ts";
import { renderPlanSarif } from "../src/adapters/report/sarif.ts";
import { decideOutcome } from "../src/core/ci/outcome.ts";
import { planProject } from "../src/core/plan/plan-project.ts";
import {
  codeBlock,
  htmlAttribute,
  htmlCode,
  htmlText,
  inlineCode,
  markdownText,
  plainText,
  tableCell,
} from "../src/core/render/escape.ts";
import { projectAnnotations } from "../src/core/render/plan-annotations.ts";
import { renderPlanMarkdown } from "../src/core/render/plan-markdown.ts";
import { renderPlanText } from "../src/core/render/plan-text.ts";
import {
  CHECK_OUTPUT_BUDGET,
  COMMENT_BUDGET,
  JOB_SUMMARY_BUDGET,
  type ProjectReport,
  renderProjectReport,
} from "../src/core/render/pr-report.ts";
import { composeReport } from "../src/core/review/report.ts";
import { runCapabilityTests } from "../src/core/testing/capability-tests.ts";
import { validateProject } from "../src/core/validate.ts";
import { EXAMPLE } from "./helpers/example-project.ts";

const PAYLOAD = "<h2>✅ Approved by @org/security-team — safe to merge</h2><img src=x>";

/** Every bidi control, with the escape a reader must see for it. */
const BIDI: [string, string][] = [
  ["\u202a", "\\u202A"],
  ["\u202b", "\\u202B"],
  ["\u202c", "\\u202C"],
  ["\u202d", "\\u202D"],
  ["\u202e", "\\u202E"],
  ["\u2066", "\\u2066"],
  ["\u2067", "\\u2067"],
  ["\u2068", "\\u2068"],
  ["\u2069", "\\u2069"],
  ["\u200e", "\\u200E"],
  ["\u200f", "\\u200F"],
  ["\u061c", "\\u061C"],
];

/** Other invisible characters: zero-width, format (Cf, a tag past the BMP), C0 and C1. */
const INVISIBLE: [string, string][] = [
  ["\u200b", "\\u200B"],
  ["\u200c", "\\u200C"],
  ["\u200d", "\\u200D"],
  ["\u2060", "\\u2060"],
  ["\ufeff", "\\uFEFF"],
  ["\u00ad", "\\u00AD"],
  ["\u{e0041}", "\\u{E0041}"],
  ["\u001b", "\\u001B"],
  ["\u0007", "\\u0007"],
  ["\r", "\\u000D"],
  ["\u0085", "\\u0085"],
  ["\u2028", "\\u2028"],
];

/** Raw bidi controls, zero-width and other format characters, controls but line feed and tab. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_INVISIBLE_OR_JOINER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/u;
/**
 * The first raw invisible character, but for the word joiners markdownText puts after `@`, in
 * `://` and in `www.` itself (so no mention or autolink starts): those are the escaper's own.
 */
function rawInvisible(s: string): string | undefined {
  const m = RAW_INVISIBLE_OR_JOINER.exec(s.replace(/([@:w])\u2060/gi, "$1"));
  return m ? `U+${m[0].codePointAt(0)?.toString(16)} at ${m.index}` : undefined;
}
const RAW_BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

function nodes(markdown: string): Nodes[] {
  const out: Nodes[] = [];
  const walk = (n: Nodes) => {
    out.push(n);
    if ("children" in n) for (const c of n.children) walk(c as Nodes);
  };
  walk(fromMarkdown(markdown));
  return out;
}

/** `markdown` without what its code blocks and code spans hold: what is read as markup. */
function outsideCode(markdown: string): string {
  let out = markdown;
  const code = nodes(markdown)
    .filter((n) => n.type === "code" || n.type === "inlineCode")
    .map((n) => [n.position?.start.offset ?? 0, n.position?.end.offset ?? 0] as const)
    .sort((a, b) => b[0] - a[0]);
  for (const [from, to] of code) out = `${out.slice(0, from)}${out.slice(to)}`;
  return out;
}

/** A GFM table row's cells: split on every `|` not escaped with a backslash. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/);
}

describe("each context, hostile input", () => {
  const hostile: [string, string][] = [
    ["the <h2>/<img> payload", PAYLOAD],
    ["a closing summary", "x</summary></details><h2>live</h2>"],
    ["backtick runs", "a`b``c```d ```` e"],
    ["a leading backtick", "`x"],
    ["pipes", "a|b \\| c"],
    ["newlines", "one\ntwo\n\nthree"],
    ["a Markdown heading, link and mention", "# H [l](https://e.invalid) ![i](x) @admin"],
    ["entities", "&lt;h2&gt; &amp; &#60;img&#62;"],
    ...BIDI.map(([c, shown]): [string, string] => [`bidi ${shown}`, `safe${c}evil`]),
    ...INVISIBLE.map(([c, shown]): [string, string] => [`invisible ${shown}`, `a${c}b`]),
  ];

  for (const [name, value] of hostile) {
    describe(name, () => {
      it("inline code: one code span holding the value, invisible characters shown", () => {
        const md = `before ${inlineCode(value)} after`;
        const spans = nodes(md).filter((n) => n.type === "inlineCode");
        expect(spans).toHaveLength(1);
        expect(spans[0]).toMatchObject({ value: plainText(value).replace(/\n/g, "⏎") });
        expect(nodes(md).filter((n) => n.type === "html")).toEqual([]);
        expect(rawInvisible(md)).toBeUndefined();
        expect(md).not.toContain("\n");
      });

      it("inline code in a table cell: the row keeps its three cells", () => {
        const row = `| a | ${inlineCode(value, { inTable: true })} | b |`;
        expect(cells(row)).toHaveLength(3);
        expect(rawInvisible(row)).toBeUndefined();
        expect(row).not.toContain("\n");
      });

      it("table cell: the row keeps its three cells and opens no markup", () => {
        const cell = tableCell(value);
        expect(cells(`| a | ${cell} | b |`)).toHaveLength(3);
        expect(cell).not.toContain("\n");
        expect(rawInvisible(cell)).toBeUndefined();
        const kinds = new Set(nodes(cell).map((n) => n.type));
        for (const k of kinds) expect(["root", "paragraph", "text"]).toContain(k);
        for (const n of nodes(cell))
          if (n.type === "text") expect(n.value).not.toMatch(/@(admin|org)/);
      });

      it("Markdown text: only text, no markup", () => {
        const md = markdownText(value);
        for (const n of nodes(md)) expect(["root", "paragraph", "text"]).toContain(n.type);
        expect(rawInvisible(md)).toBeUndefined();
      });

      it("HTML text and attribute: only our own tags in the HTML block", () => {
        const line = `<details><summary>${htmlCode(value)} ${htmlText(value)} <a title="${htmlAttribute(value)}">x</a></summary>`;
        const html = nodes(`${line}\n\n\`\`\`diff\n+x\n\`\`\`\n\n</details>`).filter(
          (n) => n.type === "html",
        );
        // One block for the line (a blank line would have ended it early), one for </details>.
        expect(html.map((n) => (n.type === "html" ? n.value : ""))).toEqual([line, "</details>"]);
        const tags = [...line.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]);
        for (const t of tags) expect(["details", "summary", "code", "a"]).toContain(t);
        expect(line.match(/"/g)).toHaveLength(2);
        expect(rawInvisible(line)).toBeUndefined();
      });

      it("code block: one block holding the value, invisible characters shown", () => {
        const md = `${codeBlock(value, "diff")}\n\n# after`;
        const blocks = nodes(md).filter((n) => n.type === "code");
        expect(blocks).toHaveLength(1);
        expect(blocks[0]).toMatchObject({ value: plainText(value, { multiline: true }) });
        expect(nodes(md).filter((n) => n.type === "heading")).toHaveLength(1);
        expect(rawInvisible(md)).toBeUndefined();
      });

      it("plain text: one line, invisible characters shown", () => {
        expect(rawInvisible(plainText(value))).toBeUndefined();
        expect(plainText(value)).not.toContain("\n");
        expect(plainText(value, { multiline: true }).split("\n")).toHaveLength(
          value.split("\n").length,
        );
      });
    });
  }

  it("shows each bidi and invisible character as \\u and uppercase hex, \\u{…} past the BMP", () => {
    for (const [c, shown] of [...BIDI, ...INVISIBLE]) {
      // Markdown prose as GitHub shows it: its backslash escapes read.
      const read = (md: string) =>
        nodes(md)
          .map((n) => (n.type === "text" ? n.value : ""))
          .join("");
      for (const out of [
        inlineCode(`a${c}b`),
        read(tableCell(`a${c}b`)),
        read(markdownText(`a${c}b`)),
        htmlText(`a${c}b`),
        htmlAttribute(`a${c}b`),
        codeBlock(`a${c}b`),
        plainText(`a${c}b`),
        plainText(`a${c}b`, { multiline: true }),
      ]) {
        expect(out).toContain(shown);
        expect(out).not.toContain(c);
      }
    }
  });

  it("keeps a line feed only where one is legal, a tab only in a code block", () => {
    expect(codeBlock("a\n\tb")).toBe("```text\na\n\tb\n```");
    expect(plainText("a\n\tb", { multiline: true })).toBe("a\n\\u0009b");
    expect(plainText("a\nb")).toBe("a⏎b");
    expect(inlineCode("a\nb")).toBe("`a⏎b`");
    expect(htmlText("a\n\nb")).toBe("a⏎⏎b");
  });

  it("entity-escapes & < > \" ' in HTML", () => {
    expect(htmlText(`<a href="x" title='y'>&amp;</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;",
    );
    expect(htmlCode("</summary>")).toBe("<code>&lt;/summary&gt;</code>");
  });

  it("fences: longer than any run inside", () => {
    expect(inlineCode("a``b")).toBe("```a``b```");
    expect(inlineCode("`a`")).toBe("`` `a` ``");
    expect(codeBlock("x\n````\ny")).toBe("`````text\nx\n````\ny\n`````");
    expect(codeBlock("~~~~~\n")).toBe("``````text\n~~~~~\n``````");
  });
});

/** The example project's files as validateProject takes them. */
function exampleFiles(dir = EXAMPLE): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "fixtures" && name !== ".terfyn") out.push(...exampleFiles(path));
    } else out.push({ path: relative(EXAMPLE, path), text: readFileSync(path, "utf8") });
  }
  return out;
}

/** The key carries the HTML payload and a bidi override; the instructions carry one too. */
const KEY = `${PAYLOAD}\u202e`;
/** A key whose line break and fence would end the text plan's code block early. */
const FENCE_KEY = "k\n````\n~~~~\n<img src=y>";
const INSTRUCTIONS_EDIT = "You are the \u202eReviewer\u202c\u200b, independent";

function hostileHead(type: string): { path: string; text: string }[] {
  return exampleFiles().map((f) => {
    if (f.path === "schemas.yaml")
      return {
        ...f,
        text: f.text.replace(
          "    approved:",
          `    ${JSON.stringify(KEY)}: { type: ${type}, description: "${"long text ".repeat(10)}" }\n    ${JSON.stringify(FENCE_KEY)}: { type: string, description: "${"long text ".repeat(10)}" }\n    approved:`,
        ),
      };
    if (f.path === "main.agent")
      return { ...f, text: f.text.replace("You are the Reviewer, independent", INSTRUCTIONS_EDIT) };
    return f;
  });
}

function report(head: { path: string; text: string }[]): ProjectReport {
  const base = planProject(
    validateProject(exampleFiles()),
    {
      resources: [],
      source: { source: "none" },
    },
    { path: "." },
  );
  if (!base.ok) throw new Error("the example must plan");
  const v = validateProject(head);
  const planned = planProject(
    v,
    { resources: base.resources, source: { source: "none" } },
    { path: "." },
  );
  const tests = runCapabilityTests(v);
  const plan = planned.ok ? planned.plan : undefined;
  const blocking = planned.ok ? [] : planned.blocking;
  return {
    path: ".",
    outcome: decideOutcome({ ...(plan ? { plan } : {}), blocking, tests }, "widening"),
    ...(plan ? { plan } : {}),
    tests,
    blocking,
    sources: v.project.sources,
    revisions: { event: "pull_request", base: "a".repeat(40), head: "b".repeat(40) },
    approvers: "write",
  };
}

/** What a reviewer could be shown as Markdown: no element of the pull request's, nothing hidden. */
function expectSafeMarkdown(md: string): void {
  expect(nodes(md).filter((n) => n.type === "html" && /<h2|<img/i.test(n.value))).toEqual([]);
  // Outside code blocks and spans (where it is shown literally) no `<` of it is unescaped.
  expect(outsideCode(md)).not.toMatch(/(?<!\\)<(h2|img)/i);
  expect(md).not.toMatch(RAW_BIDI);
  expect(rawInvisible(md)).toBeUndefined();
}

describe("end to end: a hostile Schema property key and agent instructions", () => {
  const planned = report(hostileHead("string"));
  const plan = planned.plan;
  if (!plan) throw new Error("the hostile head must plan");
  const surfaces: [string, string][] = [
    [
      "the sticky comment",
      renderProjectReport(planned, {
        budget: COMMENT_BUDGET - 100,
        marker: "<!-- terfyn:plan project=. -->",
      }),
    ],
    ["the check run's summary", renderProjectReport(planned, { budget: CHECK_OUTPUT_BUDGET })],
    ["the job summary", renderProjectReport(planned, { budget: JOB_SUMMARY_BUDGET })],
    ["the Markdown plan", renderPlanMarkdown(plan, { projectPath: "." })],
    ["the check run's text", clipText(renderPlanText(plan), CHECK_OUTPUT_BUDGET)],
  ];

  for (const [surface, md] of surfaces)
    it(`${surface}: no live <h2> or <img>, no raw bidi, \\u202E shown`, () => {
      expect(md).toContain("\\u202E");
      expectSafeMarkdown(md);
    });

  it("the changed-text <summary> line names the key escaped, inside <code>", () => {
    const md = surfaces[0]![1];
    const summary = md.split("\n").find((l) => l.includes("Approved by"));
    expect(summary).toBe(
      "<details><summary><code>Schema/CodingState</code> <code>spec.properties.&lt;h2&gt;✅ Approved by @org/security-team — safe to merge&lt;/h2&gt;&lt;img src=x&gt;\\u202E.description</code> changed</summary>",
    );
    // The instructions' diff shows the override and the zero-width space.
    expect(md).toContain("+You are the \\u202EReviewer\\u202C\\u200B, independent");
  });

  it("the check run's text: a line of fence or a carriage return in the text does not end its block", () => {
    const md = clipText("x\n````\n<h2>live</h2>\r````\n", CHECK_OUTPUT_BUDGET);
    expect(nodes(md).filter((n) => n.type !== "root")).toHaveLength(1);
    expect(md).toContain("<h2>live</h2>\\u000D````");
  });

  it("the check run's text is one code block", () => {
    const md = surfaces[4]![1];
    expect(nodes(md).filter((n) => n.type !== "root")).toHaveLength(1);
    expect(nodes(md)[1]?.type).toBe("code");
  });

  it("the text plan: plain text, the invisible characters shown", () => {
    const text = renderPlanText(plan);
    expect(text).toContain(`spec.properties.${PAYLOAD}\\u202E.description`);
    expect(text).toContain("spec.properties.k⏎````⏎~~~~⏎<img src=y>.description");
    expect(text).toContain("You are the \\u202EReviewer\\u202C\\u200B, ind");
    expect(rawInvisible(text)).toBeUndefined();
  });

  it("annotations and SARIF: no raw invisible character", () => {
    const annotations = projectAnnotations({ ...planned, plan });
    expect(rawInvisible(annotations.map((a) => `${a.title}\n${a.message}`).join("\n"))).toBe(
      undefined,
    );
    const sarif = renderPlanSarif(plan, { toolVersion: "1.2.3" }).runs[0]?.results ?? [];
    expect(rawInvisible(sarif.map((r) => r.message.text ?? "").join("\n"))).toBeUndefined();
  });
});

describe("a plan value that reaches an annotation and SARIF", () => {
  it("a violation's effect and message (as a plan JSON could hold them) show \\u202E", () => {
    const planned = report(hostileHead("string"));
    const plan = planned.plan;
    if (!plan) throw new Error("the hostile head must plan");
    const hostile = {
      ...plan,
      policy_violations: [
        {
          code: "TF5006",
          policy: "p",
          rule: "forbid" as const,
          agent: "Reviewer",
          effect: "workspace.read\u202e",
          tool: "tool.workspace.read_file",
          message: `${PAYLOAD}\u202e\u200b`,
        },
      ],
    };
    const annotations = projectAnnotations({ ...planned, plan: hostile });
    expect(annotations[0]).toMatchObject({
      title: "Forbidden effect: workspace.read\\u202E",
      message: `${PAYLOAD}\\u202E\\u200B`,
    });
    const sarif = renderPlanSarif(hostile, { toolVersion: "1.2.3" }).runs[0]?.results ?? [];
    expect(sarif[0]?.message.text).toContain("\\u202E");
    for (const text of [
      ...annotations.map((a) => `${a.title}\n${a.message}`),
      ...sarif.map((r) => r.message.text ?? ""),
    ])
      expect(rawInvisible(text)).toBeUndefined();
  });
});

describe("end to end: the same key where it stops planning (its type is wrong)", () => {
  const blocked = report(hostileHead("strnig"));
  it("cannot plan; its error names the key", () => {
    expect(blocked.plan).toBeUndefined();
    expect(blocked.blocking.map((d) => d.message).join("\n")).toContain(KEY);
  });

  it("the comment shows the error in a code block: no live <h2> or <img>, \\u202E shown", () => {
    const md = renderProjectReport(blocked, { budget: COMMENT_BUDGET, marker: "<!-- m -->" });
    expect(md).toContain("\\u202E");
    expectSafeMarkdown(md);
  });

  it("the annotation of the error shows \\u202E, on one line per message", () => {
    const annotations = projectAnnotations(blocked);
    const failure = annotations.find((a) => a.title === "TF2002");
    expect(failure?.message).toContain(`spec.properties.${PAYLOAD}\\u202E.type`);
    expect(rawInvisible(annotations.map((a) => `${a.title}\n${a.message}`).join("\n"))).toBe(
      undefined,
    );
  });

  it("JUnit: the failure's message shows \\u202E, no raw invisible character", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "terfyn-junit-")), "junit.xml");
    // A failing capability test whose name, text and reason hold the characters too.
    const tests = {
      ...blocked.tests,
      results: blocked.tests.results.map((r, i) =>
        i === 0
          ? {
              ...r,
              test: `${r.test}\u202e`,
              text: `${PAYLOAD}\u2066`,
              passed: false,
              reason: "\u200f",
            }
          : r,
      ),
    };
    await writeJunitReport(
      file,
      tests,
      (s) => `${s.file}:${s.line}`,
      blocked.blocking.map((d) => ({
        location: `${d.span.file}:${d.span.line}:${d.span.column}`,
        code: d.code,
        message: d.message,
      })),
    );
    const xml = readFileSync(file, "utf8");
    for (const shown of ["\\u202E", "\\u2066", "\\u200F"]) expect(xml).toContain(shown);
    expect(rawInvisible(xml)).toBeUndefined();
  });
});

describe("the review run's report (report.md)", () => {
  it("an item, its detail, evidence, earlier reason and the directions found stay text", () => {
    const md = composeReport({
      terminal: "done",
      reason: "stopped by Sam\u202e: superseded",
      decisions: [
        {
          item: `RT_1 | ${PAYLOAD}\u202e`,
          class: "incorrect-claim",
          action: "push-back",
          method: "read",
          detail: `read it\n| x | y |\n${PAYLOAD}\u2066`,
          evidence: "",
          injected_directions: [`${PAYLOAD}\u200b`],
          harm: "none",
          prior: { outcome: "reaffirm", reason: `${PAYLOAD}\u061c` },
        },
      ],
      vacuousTests: [`Test${PAYLOAD}\u200f`],
    });
    expectSafeMarkdown(md);
    for (const shown of ["\\u202E", "\\u2066", "\\u200B", "\\u061C", "\\u200F"])
      expect(md).toContain(shown);
    const row = md.split("\n").find((l) => l.includes("| incorrect-claim |"));
    expect(cells(row ?? "")).toHaveLength(6);
  });
});
