// Syntax-checks every .js file in src/ and test/. `node --check` takes one file per call (a
// second file on its command line is silently treated as an argument), hence this loop.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";

for (const dir of ["src", "test"]) {
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".js"))) {
    execFileSync(process.execPath, ["--check", `${dir}/${file}`], { stdio: "inherit" });
  }
}
