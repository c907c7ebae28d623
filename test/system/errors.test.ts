/**
 * Bad system files: each gives exactly one InputError with the expected code,
 * the line of the offending field and its path, in plain words (no zod text).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, type DataErrorCode } from '../../runtime/errors.js';
import { loadSystemFile, parseSystem } from '../../runtime/system/load.js';
import { HOST_CPU } from './devices.js';
import { fails } from './fails.js';

/** A small valid system: host CPU, one GPU, one FPGA, one peer link. */
// Tests break the file's shape on purpose, so the object is untyped.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function base(): any {
  return {
    name: 'tiny',
    description: 'one of each kind',
    devices: [
      { ...HOST_CPU, peakGflops: { ...HOST_CPU.peakGflops }, waitingPowerW: 12 },
      {
        id: 'gpu',
        kind: 'gpu',
        name: 'a GPU',
        count: 2,
        peakGflops: { f32: 1000, f64: 500, i32: 1000, i64: 250 },
        memBandwidthGBs: 900,
        launchOverheadUs: 5,
        idlePowerW: 30,
        waitingPowerW: 90,
        activePowerW: 200,
        memoryGB: 24,
        hostLink: { bandwidthGBs: 12, latencyUs: 10 },
      },
      {
        id: 'fpga',
        kind: 'fpga',
        name: 'an FPGA',
        count: 1,
        peakGflops: { f32: 400, f64: 100, i32: 400, i64: 100 },
        memBandwidthGBs: 460,
        launchOverheadUs: 30,
        idlePowerW: 25,
        waitingPowerW: 35,
        activePowerW: 75,
        memoryGB: 8,
        hostLink: { bandwidthGBs: 12, latencyUs: 10 },
        fpga: {
          clockMHz: 250,
          hbmChannels: 32,
          channelBandwidthGBs: 14.375,
          resources: { lut: 1000, ff: 2000, bram: 100, uram: 10, dsp: 500 },
          bitstreamLoadMs: 800,
        },
      },
    ],
    peerLinks: [{ a: 'gpu', b: 'fpga', bandwidthGBs: 10, latencyUs: 10 }],
    constraints: { powerCapW: 600 },
  };
}

const text = (o: unknown): string => JSON.stringify(o, null, 2) + '\n';

/** 1-based line of the only line containing `needle`. */
function lineOf(src: string, needle: string): number {
  const hits = src.split('\n').flatMap((l, i) => (l.includes(needle) ? [i + 1] : []));
  expect(hits, `needle ${needle}`).toHaveLength(1);
  return hits[0]!;
}

function expectError(e: InputError, code: DataErrorCode, line: number | undefined, ...fragments: string[]): void {
  expect(e.code).toBe(code);
  expect(e.file).toBe('sys.json');
  expect(e.line).toBe(line);
  expect(e.message).toBe(`sys.json${line !== undefined ? `:${line}` : ''}: error ${code}: ${e.detail}`);
  for (const f of fragments) expect(e.detail).toContain(f);
  // plain words, not zod's messages
  expect(e.detail).not.toMatch(/Invalid input|Too small|Unrecognized key|ZodError|\n/);
}

/** The error `parseSystem` gives for the base system edited by `edit`, at the only line holding `needle`. */
function expectFieldError(
  edit: (o: ReturnType<typeof base>) => void,
  code: DataErrorCode,
  needle: string,
  ...fragments: string[]
): void {
  const o = base();
  edit(o);
  const src = text(o);
  expectError(fails(src), code, lineOf(src, needle), ...fragments);
}

describe('the base system', () => {
  it('is valid', () => {
    const s = parseSystem(text(base()), 'sys.json');
    expect(s.devices.map((d) => d.id)).toEqual(['cpu', 'gpu', 'fpga']);
    expect(s.sources).toBeUndefined();
  });
  it('peerLinks and constraints may be left out', () => {
    const o = base();
    delete o.peerLinks;
    delete o.constraints;
    const s = parseSystem(text(o), 'sys.json');
    expect(s.peerLinks).toEqual([]);
    expect(s.constraints).toEqual({});
  });
  it('accepts a byte order mark', () => {
    expect(parseSystem('\ufeff' + text(base()), 'sys.json').name).toBe('tiny');
  });
});

describe('invalid JSON (DY3018) gives the line', () => {
  it('trailing comma (V8 reports a position)', () => {
    const src = text(base()).replace('"memoryGB": 24,', '"memoryGB": 24,,');
    expectError(fails(src), 'DY3018', lineOf(src, '"memoryGB": 24,,'), 'invalid JSON at column');
  });
  it('comma missing between fields', () => {
    const src = text(base()).replace('"memoryGB": 8,', '"memoryGB": 8');
    // the error is where the next field starts
    expectError(fails(src), 'DY3018', lineOf(src, '"memoryGB": 8') + 1, "expected ',' or '}'");
  });
  it('bad literal (V8 gives no position; the scanner finds it)', () => {
    const src = text(base()).replace('"threads": 4', '"threads": tru');
    expectError(fails(src), 'DY3018', lineOf(src, '"threads": tru'), 'expected a value');
  });
  it('bare word', () => {
    const src = text(base()).replace('"kind": "gpu"', '"kind": gpu');
    expectError(fails(src), 'DY3018', lineOf(src, '"kind": gpu'));
  });
  it('truncated file: the last line', () => {
    const full = text(base());
    const src = full.slice(0, full.indexOf('"peerLinks"'));
    expectError(fails(src), 'DY3018', src.split('\n').length, 'end of the file');
  });
  it('empty file', () => {
    expectError(fails(''), 'DY3018', 1);
  });
  it('line break inside a string', () => {
    const src = text(base()).replace('"a GPU"', '"my\nGPU"');
    expectError(fails(src), 'DY3018', lineOf(src, '"my'), 'control character');
  });
  it('a position on a later line is counted from 1', () => {
    const src = '{\n  "name": "x",\n  "description": "y"\n  "devices": []\n}\n';
    expectError(fails(src), 'DY3018', 4);
  });
});

describe('schema violations name the field path and its line', () => {
  it('unknown key (DY3019), with a suggestion for a misspelling', () => {
    const o = base();
    o.devices[1].memBandwithGBs = o.devices[1].memBandwidthGBs;
    delete o.devices[1].memBandwidthGBs;
    const src = text(o);
    expectError(
      fails(src),
      'DY3019',
      lineOf(src, 'memBandwithGBs'),
      '`devices[1].memBandwithGBs`',
      'did you mean `memBandwidthGBs`?',
    );
  });
  it('unknown key lists the allowed ones', () => {
    const o = base();
    o.devices[2].fpga.resources.luts = 5;
    const src = text(o);
    expectError(
      fails(src),
      'DY3019',
      lineOf(src, '"luts"'),
      '`devices[2].fpga.resources.luts`',
      'expected only: lut, ff, bram, uram, dsp',
    );
  });
  it('unknown top-level key', () => {
    const o = { ...base(), comment: 'hi' };
    const src = text(o);
    expectError(fails(src), 'DY3019', lineOf(src, '"comment"'), 'unknown field `comment`');
  });
  it('repeated key (DY3019)', () => {
    const src = text(base()).replace('"memoryGB": 24,', '"memoryGB": 24,\n      "memoryGB": 32,');
    expectError(fails(src), 'DY3019', lineOf(src, '"memoryGB": 32'), '`devices[1].memoryGB` appears twice');
  });
  it('missing field (DY3020): the line of its object', () => {
    const o = base();
    delete o.devices[1].memBandwidthGBs;
    const src = text(o);
    expectError(
      fails(src),
      'DY3020',
      lineOf(src, '"id": "gpu"') - 1,
      'missing field `devices[1].memBandwidthGBs`: expected a positive number',
    );
  });
  it('missing block: names its fields', () => {
    const o = base();
    delete o.devices[0].peakGflops;
    expectError(
      fails(text(o)),
      'DY3020',
      5,
      'missing field `devices[0].peakGflops`: expected an object with fields f32, f64, i32, i64',
    );
  });
  it('missing top-level field', () => {
    const o = base();
    delete o.description;
    expectError(fails(text(o)), 'DY3020', 1, 'missing field `description`: expected a string');
  });
  it('negative bandwidth (DY3021)', () =>
    expectFieldError(
      (o) => {
        o.devices[1].memBandwidthGBs = -3;
      },
      'DY3021',
      '"memBandwidthGBs": -3',
      '`devices[1].memBandwidthGBs`: expected a positive number, got -3',
    ));
  it('zero link bandwidth', () =>
    expectFieldError(
      (o) => {
        o.peerLinks[0].bandwidthGBs = 0;
      },
      'DY3021',
      '"bandwidthGBs": 0',
      '`peerLinks[0].bandwidthGBs`: expected a positive number, got 0',
    ));
  it('negative latency', () =>
    expectFieldError(
      (o) => {
        o.devices[2].hostLink.latencyUs = -1;
      },
      'DY3021',
      '"latencyUs": -1',
      '`devices[2].hostLink.latencyUs`: expected a number >= 0, got -1',
    ));
  it('wrong type', () =>
    expectFieldError(
      (o) => {
        o.devices[0].memoryGB = '16';
      },
      'DY3021',
      '"memoryGB": "16"',
      '`devices[0].memoryGB`: expected a number, got "16"',
    ));
  it('fractional count', () =>
    expectFieldError(
      (o) => {
        o.devices[1].count = 1.5;
      },
      'DY3021',
      '"count": 1.5',
      '`devices[1].count`: expected an integer, got 1.5',
    ));
  it('wrong kind (DY3021)', () =>
    expectFieldError(
      (o) => {
        o.devices[1].kind = 'tpu';
      },
      'DY3021',
      '"kind": "tpu"',
      '`devices[1].kind`: expected one of "cpu", "gpu", "fpga", got "tpu"',
    ));
  // Regression: activePowerW 1e308 was taken, and the energies it gave were printed as Infinity and written as null.
  it('a figure beyond what any device has', () =>
    expectFieldError(
      (o) => {
        o.devices[1].activePowerW = 1e308;
      },
      'DY3021',
      '"activePowerW": 1e+308',
      '`devices[1].activePowerW`: expected a number <= 1000000000000000, got 1e+308',
    ));
  it('bad device id', () =>
    expectFieldError(
      (o) => {
        o.devices[1].id = 'GPU-A';
      },
      'DY3021',
      '"GPU-A"',
      '`devices[1].id`: expected a device id',
      'got "GPU-A"',
    ));
  it('no devices', () =>
    expectFieldError(
      (o) => {
        o.devices = [];
      },
      'DY3021',
      '"devices"',
      '`devices`: expected at least 1 entry, got an empty array',
    ));
  it('active power below waiting power', () =>
    expectFieldError(
      (o) => {
        o.devices[1].activePowerW = 80;
      },
      'DY3021',
      '"activePowerW": 80',
      'expected activePowerW >= waitingPowerW (90), got 80',
    ));
  it('waiting power below idle power', () =>
    expectFieldError(
      (o) => {
        o.devices[1].waitingPowerW = 20;
      },
      'DY3021',
      '"waitingPowerW": 20',
      'expected waitingPowerW >= idlePowerW (30), got 20',
    ));
  it('a missing waiting power', () => {
    const o = base();
    delete o.devices[2].waitingPowerW;
    const src = text(o);
    expectError(
      fails(src),
      'DY3020',
      lineOf(src, '"id": "fpga"') - 1,
      'missing field `devices[2].waitingPowerW`: expected a number >= 0',
    );
  });
  it('a root complex on a device other than the host CPU', () =>
    expectFieldError(
      (o) => {
        o.devices[1].rootComplexGBs = 48;
      },
      'DY3025',
      '"rootComplexGBs"',
      '"rootComplexGBs" is for the host CPU only',
    ));
  it('top level is not an object', () => {
    expectError(fails('[1, 2]\n'), 'DY3021', 1, 'expected a JSON object at the top level, got an array of 2 entries');
  });
  it('the first problem in the file is reported', () =>
    expectFieldError(
      (o) => {
        o.devices[2].memBandwidthGBs = -1;
        o.devices[0].memoryGB = -2;
      },
      'DY3021',
      '"memoryGB": -2',
      '`devices[0].memoryGB`',
    ));
});

describe('checks across fields', () => {
  it('a range whose low end is above its high end (DY3021): the low end', () =>
    expectFieldError(
      (o) => {
        o.ranges = { 'devices[1].activePowerW': { low: 251, high: 144, basis: 'two ends swapped' } };
      },
      'DY3021',
      '"low": 251',
      '`ranges["devices[1].activePowerW"].low`',
      'expected low <= high',
    ));
  it('duplicate device ids (DY3022): the second id', () => {
    const o = base();
    o.devices[2].id = 'gpu';
    o.peerLinks = [];
    const src = text(o);
    const second = src.split('\n').flatMap((l, i) => (l.includes('"id": "gpu"') ? [i + 1] : []))[1];
    expectError(fails(src), 'DY3022', second, '`devices[2].id`', 'device id "gpu" is already used by devices[1]');
  });
  it('peer link to an unknown device (DY3023)', () => {
    const o = base();
    o.peerLinks[0].b = 'fgpa';
    const src = text(o);
    expectError(
      fails(src),
      'DY3023',
      lineOf(src, '"b": "fgpa"'),
      'peerLinks[0].b names device "fgpa"',
      'expected one of: cpu, gpu, fpga',
    );
  });
  it('two CPUs (DY3024)', () => {
    const o = base();
    o.devices.push({ ...o.devices[0], id: 'cpu2' });
    const src = text(o);
    expectError(
      fails(src),
      'DY3024',
      lineOf(src, '"id": "cpu2"') + 1,
      '`devices[3].kind`',
      'second device of kind "cpu"',
    );
  });
  it('no CPU (DY3024)', () =>
    expectFieldError(
      (o) => {
        o.devices.shift();
      },
      'DY3024',
      '"devices"',
      'no device has kind "cpu"',
    ));
  it('host CPU with count 2 (DY3024)', () =>
    expectFieldError(
      (o) => {
        o.devices[0].count = 3;
      },
      'DY3024',
      '"count": 3',
      '`devices[0].count`',
      'count must be 1',
    ));
  it('FPGA without fpga block (DY3025)', () => {
    const o = base();
    delete o.devices[2].fpga;
    const src = text(o);
    expectError(fails(src), 'DY3025', lineOf(src, '"id": "fpga"') - 1, '`devices[2]`', 'needs an "fpga" block');
  });
  it('GPU with an fpga block (DY3025)', () => {
    const o = base();
    o.devices[1].fpga = base().devices[2].fpga;
    const src = text(o);
    const fpgaLines = src.split('\n').flatMap((l, i) => (l.includes('"fpga": {') ? [i + 1] : []));
    expectError(fails(src), 'DY3025', fpgaLines[0], '`devices[1].fpga`', 'only a device of kind "fpga"');
  });
  it('GPU without hostLink (DY3025)', () => {
    const o = base();
    delete o.devices[1].hostLink;
    const src = text(o);
    expectError(fails(src), 'DY3025', lineOf(src, '"id": "gpu"') - 1, 'needs a hostLink');
  });
  it('host CPU with a hostLink (DY3025)', () => {
    const o = base();
    o.devices[0].hostLink = { bandwidthGBs: 1, latencyUs: 1 };
    const src = text(o);
    const first = src.split('\n').findIndex((l) => l.includes('"hostLink"')) + 1;
    expectError(fails(src), 'DY3025', first, '`devices[0].hostLink`', 'the host CPU has no hostLink');
  });
  it('threads on a GPU (DY3025)', () =>
    expectFieldError(
      (o) => {
        o.devices[1].threads = 8;
      },
      'DY3025',
      '"threads": 8',
      '`devices[1].threads`',
    ));
  it('peer link repeated (DY3026)', () => {
    const o = base();
    o.peerLinks.push({ a: 'fpga', b: 'gpu', bandwidthGBs: 5, latencyUs: 1 });
    const src = text(o);
    expectError(fails(src), 'DY3026', lineOf(src, '"a": "fpga"') - 1, 'as peerLinks[0] already does');
  });
  it('peer link to the host CPU (DY3026)', () => {
    const o = base();
    o.peerLinks.push({ a: 'cpu', b: 'gpu', bandwidthGBs: 5, latencyUs: 1 });
    const src = text(o);
    expectError(fails(src), 'DY3026', lineOf(src, '"a": "cpu"') - 1, 'hostLink');
  });
  it('self link needs two instances (DY3026); with two it is fine', () => {
    const o = base();
    o.peerLinks.push({ a: 'fpga', b: 'fpga', bandwidthGBs: 5, latencyUs: 1 });
    const src = text(o);
    expectError(fails(src), 'DY3026', lineOf(src, '"a": "fpga"') - 1, 'only one instance');
    const ok = base();
    ok.peerLinks.push({ a: 'gpu', b: 'gpu', bandwidthGBs: 5, latencyUs: 1 });
    expect(parseSystem(text(ok), 'sys.json').peerLinks).toHaveLength(2);
  });
});

describe('files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dype-system-'));
  it('unreadable file (DY3010)', () => {
    const path = join(dir, 'absent.json');
    try {
      loadSystemFile(path);
      throw new Error('expected an InputError');
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).code).toBe('DY3010');
      expect((e as InputError).file).toBe(path);
      expect((e as InputError).detail).toContain('no such file');
    }
  });
  it('a directory (DY3010)', () => {
    expect(() => loadSystemFile(dir)).toThrowError(/error DY3010: cannot read the file: it is a directory/);
  });
  it('errors name the file given', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, '{\n  "name": 1\n}\n');
    expect(() => loadSystemFile(path)).toThrowError(`${path}:2: error DY3021: \`name\`: expected a string, got 1`);
  });
});
