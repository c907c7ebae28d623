/**
 * Loads a generated native library (CUDA, its CPU emulation, the FPGA host
 * library over XRT or C simulation) in process through koffi and binds the
 * native ABI (./abi.ts). It refuses a library of another ABI version or
 * another program, and one whose backend is not the one asked for (an
 * emulated build is used only when the caller asks for emulation).
 */
import { existsSync } from 'node:fs';
import koffi, { type LibraryHandle } from 'koffi';
import { InputError } from '../errors.js';
import {
  ABI_FUNCTIONS,
  ABI_VERSION,
  abiPrefix,
  NATIVE_BACKENDS,
  type AbiFunction,
  type NativeBackendName,
  type NativeFamily,
} from './abi.js';

/** A device pointer as koffi returns it (an address). */
export type NativePtr = bigint | number | null;

type Fn = ((...args: unknown[]) => unknown) & { async: (...args: unknown[]) => void };

export interface NativeLibraryOptions {
  program: string;
  /** The hash of the program the caller runs (plan.json / the compiled .dy); the library must carry the same. */
  programHash?: string;
  family: NativeFamily;
  /** Load the emulated build's backend (cuda-emu, fpga-csim) rather than the real one. */
  emulated: boolean;
  /** The command that builds the library, for the message when it is missing. */
  buildCommand: string;
}

export class NativeLibrary {
  readonly backend: NativeBackendName;
  /** The program the library was built from (its own program()). */
  get program(): string {
    return this.call('program') as string;
  }
  /** That program's hash (its own program_hash()). */
  get programHash(): string {
    return this.call('program_hash') as string;
  }
  private readonly fns: Record<AbiFunction, Fn>;

  private constructor(
    readonly path: string,
    private readonly lib: LibraryHandle,
    readonly prefix: string,
  ) {
    const fns = {} as Record<AbiFunction, Fn>;
    for (const [name, proto] of Object.entries(ABI_FUNCTIONS) as [AbiFunction, string][]) {
      const full = proto.replace(/\b(\w+)\(/, `${prefix}$1(`);
      try {
        fns[name] = lib.func(full) as unknown as Fn;
      } catch (e) {
        throw new InputError(
          'DY3044',
          path,
          undefined,
          `does not export ${prefix}${name}: not a dype native library of this program and ABI (${(e as Error).message})`,
        );
      }
    }
    this.fns = fns;
    this.backend = this.call('backend') as NativeBackendName;
  }

  static open(path: string, o: NativeLibraryOptions): NativeLibrary {
    if (!existsSync(path))
      throw new InputError(
        'DY3043',
        path,
        undefined,
        `the ${o.emulated ? 'emulated ' : ''}${o.family} library is not built: run ${o.buildCommand}`,
      );
    let lib: LibraryHandle;
    try {
      lib = koffi.load(path);
    } catch (e) {
      throw new InputError(
        'DY3043',
        path,
        undefined,
        `cannot load the ${o.family} library: ${(e as Error).message} (rebuild it with ${o.buildCommand})`,
      );
    }
    const me = new NativeLibrary(path, lib, abiPrefix(o.program, o.family));
    const version = me.call('abi_version') as number;
    if (version !== ABI_VERSION)
      throw new InputError(
        'DY3044',
        path,
        undefined,
        `speaks native ABI version ${version}; this runtime speaks ${ABI_VERSION}: rebuild it with ${o.buildCommand}`,
      );
    const program = me.program;
    if (program !== o.program)
      throw new InputError('DY3044', path, undefined, `was built from program '${program}', not '${o.program}'`);
    const hash = me.programHash;
    if (o.programHash !== undefined && hash !== o.programHash)
      throw new InputError(
        'DY3044',
        path,
        undefined,
        `was built from another version of program '${o.program}' (hash ${hash.slice(0, 12)}, expected ${o.programHash.slice(0, 12)}): recompile the project and rebuild it with ${o.buildCommand}`,
      );
    const want = o.emulated ? NATIVE_BACKENDS[o.family].emulated : NATIVE_BACKENDS[o.family].real;
    if (want === null)
      throw new InputError(
        'DY3044',
        path,
        undefined,
        `the ${o.family} family has no emulated build; open it with emulated: false`,
      );
    if (me.backend !== want)
      throw new InputError(
        'DY3044',
        path,
        undefined,
        `runs on ${me.backend}, but ${want} was asked for${o.emulated ? '' : ' (emulated builds are used only with --emulate / emulate: true)'}`,
      );
    return me;
  }

  /**
   * A function of the library outside the ABI, by its C prototype without the
   * prefix (the CPU library's `set_threads`), or with another spelling of an
   * ABI function's types (pointers as 64-bit integers).
   */
  bind(proto: string): (...args: unknown[]) => unknown {
    const full = proto.replace(/\b(\w+)\(/, `${this.prefix}$1(`);
    try {
      return this.lib.func(full) as unknown as (...args: unknown[]) => unknown;
    } catch (e) {
      throw new InputError('DY3044', this.path, undefined, `does not export ${full}: ${(e as Error).message}`);
    }
  }

  /** A synchronous call of an ABI function (the cheap ones, and everything when nothing runs concurrently). */
  call(name: AbiFunction, ...args: unknown[]): unknown {
    return this.fns[name](...args);
  }

  /** The same call on one of koffi's threads, so that the event loop (and other devices' stages) go on meanwhile. */
  callAsync(name: AbiFunction, ...args: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) =>
      this.fns[name].async(...args, (err: unknown, res: unknown) => (err ? reject(err) : resolve(res))),
    );
  }

  errorText(code: number): string {
    return (this.call('error_text', code) as string | null) ?? `error ${code}`;
  }
}
