/**
 * `dype hls FILE.dy -o DIR`: only the FPGA project (the hls target of
 * `dype compile`, written at the top of DIR). All or nothing: the files are
 * generated in memory and written only when every kernel passed the
 * legality checks.
 */
import { emitHlsProject } from '../codegen/hls/project.js';
import { usage } from './errors.js';
import { compileProgram } from './compile.js';
import { checkOutputDir } from './output-path.js';
import { writeProject } from './project-writer.js';

export interface HlsCliOptions {
  output?: string;
}

export async function hlsCommand(file: string, o: HlsCliOptions, stdout: (s: string) => void): Promise<void> {
  if (o.output === undefined) throw usage('dype hls needs -o DIR');
  checkOutputDir(o.output);
  const { program } = compileProgram(file);
  const files = await emitHlsProject(program);
  writeProject(o.output, files);
  stdout(`wrote ${files.size} files to ${o.output}; run: make -C ${o.output} csim INPUTS="..." OUTPUTS="..."\n`);
}
