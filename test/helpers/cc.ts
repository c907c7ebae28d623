/** Whether the system C compiler the native CPU backend builds with ($CC, else cc) runs here. */
import { cCompiler, compilerVersion } from '../../codegen/cpu/build.js';

export function haveCompiler(): boolean {
  try {
    compilerVersion(cCompiler());
    return true;
  } catch {
    return false;
  }
}
