/**
 * `dype hls FILE.dy -o DIR [--kernel NAME]`: only the FPGA project (the hls
 * target of `dype compile`, written at the top of DIR), every kernel in it;
 * `--kernel` names the one its Makefile builds and runs by default (`make
 * csim`; `KERNEL=` still picks another), as `run --kernel` picks the kernel
 * to run. All or nothing: the files are generated in memory and written
 * only when every kernel passed the legality checks.
 */
import { emitHlsProject } from '../codegen/hls/project.js';
import { usage } from './errors.js';
import { compileProgram } from './compile.js';
import { selectKernel } from './program.js';
import { checkOutputDir } from './output-path.js';
import { writeProject } from './project-writer.js';

export interface HlsCliOptions {
  output?: string;
  kernel?: string;
}

export async function hlsCommand(file: string, o: HlsCliOptions, stdout: (s: string) => void): Promise<void> {
  if (o.output === undefined) throw usage('dype hls needs -o DIR');
  checkOutputDir(o.output);
  const { program } = compileProgram(file);
  // DY2030 naming the kernels for an unknown name, as run and ir report it.
  const kernel =
    o.kernel !== undefined ? selectKernel(program.module, file, o.kernel).name : program.module.kernels[0]!.name;
  const files = await emitHlsProject(program, { defaultKernel: kernel });
  writeProject(o.output, files);
  const others =
    program.module.kernels.length > 1
      ? ` (kernel ${kernel}; KERNEL=NAME for another of ${program.module.kernels.map((k) => k.name).join(', ')})`
      : '';
  stdout(
    `wrote ${files.size} files to ${o.output}; run: make -C ${o.output} csim INPUTS="..." OUTPUTS="..."${others}\n`,
  );
}
