import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));
import{a as T}from"./chunk-Z5N5GLDG.js";import{c as L}from"./chunk-KTFGODFR.js";import"./chunk-W577HZLE.js";import"./chunk-5NH3S3RE.js";import{a as A,e as F}from"./chunk-FV2DRIXO.js";import{e as b,f as v,g as C,h as E,i as P}from"./chunk-SRF25IFE.js";import"./chunk-2DPPQRCA.js";import"./chunk-7P7T5M4R.js";import"./chunk-UVKAWBJK.js";import{g as R}from"./chunk-QFGGXLSO.js";import"./chunk-PMPGV4OQ.js";import"./chunk-GGY3QJ3Z.js";import"./chunk-CRHX2DYB.js";import"./chunk-ML6YJ7H3.js";import"./chunk-YFUMW23J.js";import"./chunk-WV2TDCMY.js";import{resolve as _}from"node:path";import{mkdir as M,writeFile as J}from"node:fs/promises";import{dirname as N}from"node:path";var w=d=>b(d),$=class extends Error{};async function k(d,n,p,g=[]){let m=(await import("./dist-FNYZC6MM.js")).default,h=(m.default??m).newBuilder(),u=new Map;for(let i of n.results){let e=u.get(i.test);e||(e=h.testSuite().name(`CapabilityTest/${w(i.test)}`),u.set(i.test,e));let f=e.testCase().className(`CapabilityTest/${w(i.test)}`).name(w(i.text)).file(w(p(i.span)));i.passed?g.length>0&&f.skipped():f.failure(b(i.reason??"failed",{multiline:!0}),i.kind)}if(g.length>0){let i=h.testSuite().name("terfyn validate");for(let e of g)i.testCase().className("terfyn validate").name(w(`${e.location}: ${e.code}`)).file(w(e.location)).failure(b(e.message,{multiline:!0}),e.code)}else n.results.length===0&&h.testSuite().name("CapabilityTest (none)");try{await M(N(d),{recursive:!0}),await J(d,h.build())}catch(i){let e=i.code,f=e==="EISDIR"?"it is a directory":e==="EEXIST"||e==="ENOTDIR"?"a directory on its path is a file":e==="EACCES"||e==="EPERM"?"permission denied":e??i.message;throw new $(`cannot write the JUnit report to ${d}: ${f}; --junit takes the path of a file to write`)}}var D=`Usage: terfyn test --project DIR [--junit FILE] [--format text|json]

Check every CapabilityTest assertion (forbidEffect, allowEffect, maxIterations,
workflowEffects, requiresApproval) over the project's effect bounds, with no model. Prints
PASS or FAIL per assertion (a failure names the grant and .agent line responsible) and ends
with "N passed, M failed". Exits 1 on any failure. A project that does not validate is not
trusted: each of its errors is a FAIL line and a failure, failed assertions still count, and
passing ones show as SKIP (also in the JUnit report), so it ends "0 passed, M failed".

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --junit FILE    also write the results as JUnit XML
  --format FORMAT text (default) or json: a document with format_version "1", ok, passed,
                  failed, every result (status PASS, FAIL or SKIP, with its location) and,
                  when the project does not validate, its errors
  --json          same as --format json
  -h, --help      show this help
`;async function Z(d,n){let{values:p,positionals:g}=A("test",d,{project:{type:"string"},junit:{type:"string"},format:{type:"string"},json:{type:"boolean"}});if(p.help)return n.stdout(D),0;if(g.length>0)throw new E(`test: unexpected argument \`${g[0]}\` (use --project DIR)`);let m=p.json?"json":p.format??"text";if(m!=="text"&&m!=="json")throw new E(`test: --format must be text or json, not \`${m}\``);F("test",{"--project":{value:p.project,what:"the directory holding terfyn.yaml"}});let r=await L(n,p.project),h=C(n),u=(t,o)=>h?`\x1B[${t}m${o}\x1B[0m`:o,i=t=>`${r.displayPath(t.file)}:${t.line}`,e=t=>v(t),f=async(t,o=[])=>{if(p.junit!==void 0)try{await k(_(n.cwd,p.junit),t,i,o)}catch(l){throw l instanceof $?new P(l.message):l}},c=r.diagnostics.filter(t=>t.severity==="error"),y=c.length===0,a=T(r.validation);if(m==="json"){let t=s=>({file:r.displayPath(s.file),line:s.line,column:s.column}),o=a.results.map(s=>({test:s.test,kind:s.kind,assertion:s.text,status:s.passed?y?"PASS":"SKIP":"FAIL",...s.reason!==void 0?{reason:s.reason}:{},...s.culprit?{culprit:t(s.culprit)}:{},at:t(s.span)})),l=a.failed+c.length,j=y?a.passed:0;return n.stdout(`${JSON.stringify({format_version:"1",ok:l===0,passed:j,failed:l,validated:y,results:o,errors:c.map(s=>({code:s.code,message:s.message,...t(s.span)}))},null,2)}
`),await f(a,c.map(s=>({location:`${r.displayPath(s.span.file)}:${s.span.line}:${s.span.column}`,code:s.code,message:s.message}))),l>0?1:0}a.results.length===0&&y&&n.stdout(`${e(r.where)}: no capability tests (add a CapabilityTest document, e.g. tests/capabilities.yaml)
`);for(let t of a.results)if(t.passed&&y)n.stdout(`${u("32","PASS")} ${e(t.test)}: ${e(t.text)}
`);else if(t.passed)n.stdout(`${u("33","SKIP")} ${e(t.test)}: ${e(t.text)}: not trusted while the project does not validate
`);else{let o=t.culprit?` at ${e(i(t.culprit))}`:"";n.stdout(`${u("31","FAIL")} ${e(t.test)}: ${e(t.text)}: ${e(t.reason??"")}${o}
`)}if(y)return await f(a),n.stdout(`${a.passed} passed, ${a.failed} failed
`),a.failed>0?1:0;let x=c.map(t=>({location:`${r.displayPath(t.span.file)}:${t.span.line}:${t.span.column}`,code:t.code,message:t.message})),I=new Map;for(let[t,o]of x.entries()){let l=c[t].span.file,j=(I.get(l)??0)+1;I.set(l,j),j<=S&&n.stdout(`${u("31","FAIL")} validate: ${e(o.location)}: ${o.code}: ${e(o.message)}
`)}for(let[t,o]of I)o>S&&n.stdout(`${u("31","FAIL")} validate: ${e(r.displayPath(t))}: and ${o-S} more
`);return n.stdout(`${e(r.where)} does not validate (${R(c.length,"error")}; run terfyn validate for details), so no assertion counts as passed
`),await f(a,x),n.stdout(`0 passed, ${a.failed+c.length} failed
`),1}var S=20;export{D as TEST_HELP,Z as testCommand};
