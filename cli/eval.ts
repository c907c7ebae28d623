/**
 * `dype eval [--quick] [-o DIR] [--json]`: runs the evaluation suite
 * (eval/), prints the paper's table (or the JSON object of DESIGN.md
 * section 4), and with -o writes cases.csv, eval.json and report.html
 * together (all or nothing).
 */
import { existsSync } from 'node:fs';
import { matricesDir } from '../eval/paths.js';
import { caseJson, casesCsv, summarise, summaryTable } from '../eval/summary.js';
import { runSuite } from '../eval/evaluate.js';
import { renderSuiteReport } from '../eval/report/suite.js';
import { usage } from './errors.js';
import { progress } from './progress.js';
import { checkOutputDir } from './output-path.js';
import { writeProject } from './project-writer.js';

export interface EvalOptions {
  quick?: boolean;
  output?: string;
  json?: boolean;
}

export function evalCommand(o: EvalOptions, stdout: (s: string) => void): void {
  if (o.output !== undefined && o.output.trim() === '') throw usage('-o expects a directory');
  // Fail before minutes of work, not after.
  if (o.output !== undefined) checkOutputDir(o.output);
  if (!existsSync(matricesDir())) process.stderr.write(`dype eval: warning: ${matricesDir()} is missing; the suite runs on generated inputs only\n`);
  let bar: ReturnType<typeof progress> | undefined;
  const results = runSuite({
    quick: o.quick === true,
    onProgress: (done, total) => {
      bar ??= progress('dype eval', total);
      bar.tick(done);
    },
  });
  bar?.done();
  const s = summarise(results);
  const command = `dype eval${o.quick ? ' --quick' : ''}${o.output !== undefined ? ` -o ${o.output}` : ''}${o.json ? ' --json' : ''}`;
  if (o.output !== undefined) {
    writeProject(
      o.output,
      new Map<string, string>([
        ['cases.csv', casesCsv(results)],
        ['eval.json', JSON.stringify({ ...s, command, case_results: results.map(caseJson) }, null, 2) + '\n'],
        ['report.html', renderSuiteReport(results, s, command)],
      ]),
    );
  }
  stdout(o.json ? JSON.stringify(s, null, 2) + '\n' : summaryTable(s));
}
