/**
 * The zod schema of a system file (./types.ts describes the shape). Objects are
 * strict: a misspelt field is an error, not a silently ignored key. Checks that
 * span fields (unique ids, one host CPU, kind-specific blocks, peer links) run
 * after the shape is right; each reports its diagnostic code in
 * `params.code`, which ./load.ts turns into one InputError.
 */

import { z } from 'zod';
import type { DataErrorCode } from '../errors.js';
import { CPU_BACKENDS, type DeviceKind } from './types.js';

/** Device ids become instance names (gpu0) and reach generated code: keep them plain. */
export const DEVICE_ID_PATTERN = /^[a-z][a-z0-9_]*$/;

export const DEVICE_KINDS = ['cpu', 'gpu', 'fpga'] as const satisfies readonly DeviceKind[];

/**
 * The most instances of one device a system file may give (`count`). One host
 * holds at most 16 GPUs or FPGAs (an HGX/DGX-2 board: 16 GPUs), and the
 * planner weighs every instance count of every device in every stage (its
 * states grow with the product of the counts): at 16 GPUs and 16 FPGAs it
 * plans GCN or attention on a small graph in seconds, at 64 of each in
 * minutes, and a count of a billion never finished.
 */
export const MAX_DEVICE_COUNT = 16;

/**
 * The largest figure a system file may give, in any unit it uses. The largest real ones are a few million (peak
 * GFLOPS, bandwidth in GB/s); the planner multiplies figures together (power x time, bytes / bandwidth), and a value
 * near float64's limit (activePowerW 1e308) made those products infinite: energies printed as Infinity and written
 * to JSON as null.
 */
export const MAX_SYSTEM_FIGURE = 1e15;

const positive = z.number().positive().max(MAX_SYSTEM_FIGURE);
const nonNegative = z.number().nonnegative().max(MAX_SYSTEM_FIGURE);
const positiveInt = z.number().int().positive().max(MAX_SYSTEM_FIGURE);
const nonNegativeInt = z.number().int().nonnegative().max(MAX_SYSTEM_FIGURE);

const hostLinkSchema = z.strictObject({
  bandwidthGBs: positive,
  latencyUs: nonNegative,
});

const fpgaSchema = z.strictObject({
  clockMHz: positive,
  hbmChannels: positiveInt,
  channelBandwidthGBs: positive,
  resources: z.strictObject({
    lut: nonNegativeInt,
    ff: nonNegativeInt,
    bram: nonNegativeInt,
    uram: nonNegativeInt,
    dsp: nonNegativeInt,
  }),
  bitstreamLoadMs: nonNegative,
});

/** How many of the branch history's forms a model gives (runtime/plan/model.ts branchHistoryOf reads one). */
const historyForms = (m: {
  branchHistoryChangeBits?: number;
  branchHistoryBits?: number;
  branchHistoryTrips?: number;
  branchHistoryRows?: number;
}): number =>
  [m.branchHistoryChangeBits, m.branchHistoryBits, m.branchHistoryTrips, m.branchHistoryRows].filter(
    (v) => v !== undefined,
  ).length;

const cpuModelSchema = z
  .strictObject({
    nsPerNnz: nonNegative,
    nsPerGather: nonNegative,
    nsPerRow: nonNegative,
    nsPerItem: nonNegative,
    nsPerMiss: nonNegative,
    nsPerByte: nonNegative,
    cacheMB: nonNegative,
    nsPerBranchMiss: nonNegative.optional(),
    nsPerBlockEntry: nonNegative.optional(),
    nsPerDotElement: nonNegative.optional(),
    nsPerDotRowElement: nonNegative.optional(),
    branchHistoryChangeBits: nonNegative.optional(),
    branchHistoryBits: nonNegative.optional(),
    branchHistoryTrips: nonNegative.optional(),
    branchHistoryRows: nonNegative.optional(),
    parallelEfficiency: z.number().min(0).max(1).optional(),
    dispatchUsPerThread: nonNegative.optional(),
    nsPerDenseFlop: nonNegative.optional(),
    nsPerDenseByte: nonNegative.optional(),
    nsPerDenseTrip: nonNegative.optional(),
    denseBlockBytes: z.number().int().min(1).optional(),
  })
  .refine((m) => (m.nsPerDenseFlop === undefined) === (m.nsPerDenseByte === undefined), {
    message: 'nsPerDenseFlop and nsPerDenseByte go together (both, or neither for the roofline)',
    path: ['nsPerDenseByte'],
  })
  .refine((m) => (m.nsPerDenseTrip === undefined) === (m.denseBlockBytes === undefined), {
    message: 'nsPerDenseTrip and denseBlockBytes go together (the trip is a block of that many bytes of columns)',
    path: ['denseBlockBytes'],
  })
  .refine((m) => m.nsPerDenseTrip === undefined || m.nsPerDenseFlop !== undefined, {
    message: 'nsPerDenseTrip is a term of the dense fit: it needs nsPerDenseFlop and nsPerDenseByte',
    path: ['nsPerDenseTrip'],
  })
  .refine((m) => (m.nsPerBranchMiss === undefined) === (historyForms(m) === 0), {
    message:
      'nsPerBranchMiss goes with branchHistoryChangeBits (or the older branchHistoryBits, branchHistoryTrips or branchHistoryRows): both, or neither for no branch-miss term',
    path: ['nsPerBranchMiss'],
  })
  .refine((m) => historyForms(m) <= 1, {
    message:
      'branchHistoryChangeBits, branchHistoryBits, branchHistoryTrips and branchHistoryRows are forms of one figure: give one',
    path: ['branchHistoryRows'],
  });

const cpuBackendFitSchema = z.strictObject({
  launchOverheadUs: nonNegative,
  cpuModel: cpuModelSchema,
});

const historySchema = z.array(
  z.strictObject({
    opKind: z.string().min(1),
    impl: z.string().min(1),
    dtype: z.enum(['f32', 'f64', 'i32', 'i64', 'bool']),
    backend: z.string().min(1),
    buckets: z.array(
      z.strictObject({
        log2Bytes: z.number().int(),
        imbalance: z.number().int().min(-1).max(2),
        threads: positiveInt.optional(),
        runs: positiveInt,
        msPerByte: nonNegative,
      }),
    ),
  }),
);

const gpuModelSchema = z.strictObject({
  effectiveBandwidthGBs: positive,
  sparseFloorUs: nonNegative,
  queuedLaunchUs: nonNegative,
  laneStepNs: nonNegative,
  residentWarps: positive,
  rowChainNs: nonNegative,
  searchStepNs: nonNegative,
  l2CacheMB: nonNegative,
});

const fpgaModelSchema = z.strictObject({
  effectiveBandwidthGBs: positive,
});

const deviceSchema = z.strictObject({
  id: z.string().regex(DEVICE_ID_PATTERN),
  kind: z.enum(DEVICE_KINDS),
  name: z.string().min(1),
  count: positiveInt,
  /** 0 means the device cannot run that dtype at all. */
  peakGflops: z.strictObject({ f32: nonNegative, f64: nonNegative, i32: nonNegative, i64: nonNegative }),
  memBandwidthGBs: positive,
  launchOverheadUs: nonNegative,
  idlePowerW: nonNegative,
  waitingPowerW: nonNegative,
  activePowerW: positive,
  memoryGB: positive,
  hostLink: hostLinkSchema.optional(),
  threads: positiveInt.optional(),
  rootComplexGBs: positive.optional(),
  cpuModel: cpuModelSchema.optional(),
  cpuModelBackend: z.enum(CPU_BACKENDS).optional(),
  cpuBackendModels: z.partialRecord(z.enum(CPU_BACKENDS), cpuBackendFitSchema).optional(),
  history: historySchema.optional(),
  gpuModel: gpuModelSchema.optional(),
  fpga: fpgaSchema.optional(),
  fpgaModel: fpgaModelSchema.optional(),
});

const peerLinkSchema = z.strictObject({
  a: z.string(),
  b: z.string(),
  bandwidthGBs: positive,
  latencyUs: nonNegative,
});

const constraintsSchema = z.strictObject({
  powerCapW: positive.optional(),
  latencyBoundMs: positive.optional(),
});

/** The shape alone, without the checks across fields. */
export const systemShapeSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string(),
  devices: z.array(deviceSchema).min(1),
  peerLinks: z.array(peerLinkSchema).default([]),
  constraints: constraintsSchema.default({}),
  sources: z.record(z.string(), z.string()).optional(),
  measuredOn: z.record(z.string(), z.string()).optional(),
  ranges: z
    .record(z.string(), z.strictObject({ low: z.number(), high: z.number(), basis: z.string().min(1) }))
    .optional(),
});

type Shape = z.output<typeof systemShapeSchema>;
type Ctx = z.RefinementCtx<Shape>;

function report(ctx: Ctx, code: DataErrorCode, path: (string | number)[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message, params: { code } });
}

/** The checks that need more than one field; each problem is one issue. */
function checkSystem(s: Shape, ctx: Ctx): void {
  for (const [key, r] of Object.entries(s.ranges ?? {}))
    if (!(r.low <= r.high))
      report(
        ctx,
        'DY3021',
        ['ranges', key, 'low'],
        `expected low <= high in the range of ${key}, got low ${r.low} and high ${r.high}`,
      );
  const firstIndex = new Map<string, number>();
  s.devices.forEach((d, i) => {
    const prev = firstIndex.get(d.id);
    if (prev !== undefined)
      report(
        ctx,
        'DY3022',
        ['devices', i, 'id'],
        `device id "${d.id}" is already used by devices[${prev}]; ids must be unique`,
      );
    else firstIndex.set(d.id, i);
  });

  const cpus = s.devices.flatMap((d, i) => (d.kind === 'cpu' ? [i] : []));
  if (cpus.length === 0)
    report(
      ctx,
      'DY3024',
      ['devices'],
      'no device has kind "cpu": a system needs exactly one host CPU (it owns host memory and runs the program)',
    );
  for (const i of cpus.slice(1))
    report(
      ctx,
      'DY3024',
      ['devices', i, 'kind'],
      `devices[${i}] is a second device of kind "cpu" (the first is devices[${cpus[0]}]); a system has exactly one host CPU: describe all its sockets as one device`,
    );

  s.devices.forEach((d, i) => {
    const at = (...rest: (string | number)[]): (string | number)[] => ['devices', i, ...rest];
    if (d.kind === 'cpu') {
      if (d.count !== 1)
        report(
          ctx,
          'DY3024',
          at('count'),
          `the host CPU is one device (describe all its sockets as one, with combined figures), so its count must be 1, got ${d.count}`,
        );
      if (d.hostLink !== undefined)
        report(ctx, 'DY3025', at('hostLink'), 'the host CPU has no hostLink: it is the host; remove the field');
    } else {
      if (d.count > MAX_DEVICE_COUNT)
        report(
          ctx,
          'DY3021',
          at('count'),
          `expected at most ${MAX_DEVICE_COUNT} instances of one device (the most one host holds; the planner weighs every count up to it), got ${d.count}`,
        );
      if (d.hostLink === undefined)
        report(
          ctx,
          'DY3025',
          at(),
          `a device of kind "${d.kind}" needs a hostLink ({ "bandwidthGBs", "latencyUs" }: its link to host memory)`,
        );
      if (d.threads !== undefined)
        report(
          ctx,
          'DY3025',
          at('threads'),
          `"threads" is for the host CPU only, not a device of kind "${d.kind}"; remove the field`,
        );
      for (const field of ['cpuModel', 'cpuModelBackend', 'cpuBackendModels'] as const)
        if (d[field] !== undefined)
          report(
            ctx,
            'DY3025',
            at(field),
            `"${field}" is for the host CPU only, not a device of kind "${d.kind}"; remove the field`,
          );
      if (d.rootComplexGBs !== undefined)
        report(
          ctx,
          'DY3025',
          at('rootComplexGBs'),
          `"rootComplexGBs" is for the host CPU only (the root complex is the host's), not a device of kind "${d.kind}"; remove the field`,
        );
    }
    if (d.kind === 'fpga' && d.fpga === undefined)
      report(
        ctx,
        'DY3025',
        at(),
        'a device of kind "fpga" needs an "fpga" block (clockMHz, hbmChannels, channelBandwidthGBs, resources, bitstreamLoadMs)',
      );
    if (d.kind !== 'fpga' && d.fpga !== undefined)
      report(
        ctx,
        'DY3025',
        at('fpga'),
        `only a device of kind "fpga" has an "fpga" block, not one of kind "${d.kind}"; remove the field`,
      );
    checkDeviceModels(d, i, ctx);
    // A waiting instance is powered up, so it draws at least its idle and at most its active power.
    if (d.waitingPowerW < d.idlePowerW)
      report(
        ctx,
        'DY3021',
        at('waitingPowerW'),
        `expected waitingPowerW >= idlePowerW (${d.idlePowerW}), got ${d.waitingPowerW}`,
      );
    else if (d.activePowerW < d.waitingPowerW)
      report(
        ctx,
        'DY3021',
        at('activePowerW'),
        `expected activePowerW >= waitingPowerW (${d.waitingPowerW}), got ${d.activePowerW}`,
      );
  });

  const known = [...firstIndex.keys()];
  const byId = new Map(s.devices.map((d) => [d.id, d]));
  const pairs = new Map<string, number>();
  s.peerLinks.forEach((l, j) => {
    let ok = true;
    for (const end of ['a', 'b'] as const) {
      if (!byId.has(l[end])) {
        report(
          ctx,
          'DY3023',
          ['peerLinks', j, end],
          `peerLinks[${j}].${end} names device "${l[end]}", which the system does not define; expected one of: ${known.join(', ')}`,
        );
        ok = false;
      }
    }
    if (!ok) return;
    const a = byId.get(l.a)!;
    const b = byId.get(l.b)!;
    if (a.kind === 'cpu' || b.kind === 'cpu') {
      report(
        ctx,
        'DY3026',
        ['peerLinks', j],
        `peerLinks[${j}] joins the host CPU "${a.kind === 'cpu' ? a.id : b.id}"; a device's path to the host is its hostLink, so remove this link`,
      );
      return;
    }
    if (l.a === l.b && a.count < 2) {
      report(
        ctx,
        'DY3026',
        ['peerLinks', j],
        `peerLinks[${j}] joins "${l.a}" to itself, but it has only one instance (count 1); remove the link or raise the count`,
      );
      return;
    }
    const pair = [l.a, l.b].sort().join('\u0000');
    const prev = pairs.get(pair);
    if (prev !== undefined)
      report(
        ctx,
        'DY3026',
        ['peerLinks', j],
        `peerLinks[${j}] joins "${l.a}" and "${l.b}", as peerLinks[${prev}] already does; keep one link per pair`,
      );
    else pairs.set(pair, j);
  });
}

/** The GPU and FPGA model blocks: on their own kind only, and consistent with the device's datasheet figures. */
function checkDeviceModels(d: Shape['devices'][number], i: number, ctx: Ctx): void {
  const at = (...rest: (string | number)[]): (string | number)[] => ['devices', i, ...rest];
  checkCpuBackendFits(d, at, ctx);
  const blocks = [
    ['gpuModel', 'gpu', d.gpuModel],
    ['fpgaModel', 'fpga', d.fpgaModel],
  ] as const;
  for (const [field, kind, block] of blocks) {
    if (block === undefined) continue;
    if (d.kind !== kind) {
      report(
        ctx,
        'DY3025',
        at(field),
        `"${field}" is for a device of kind "${kind}" only, not one of kind "${d.kind}"; remove the field`,
      );
      continue;
    }
    // A sustained bandwidth above the datasheet peak is a typo or the wrong unit.
    if (block.effectiveBandwidthGBs > d.memBandwidthGBs)
      report(
        ctx,
        'DY3021',
        at(field, 'effectiveBandwidthGBs'),
        `expected at most memBandwidthGBs (${d.memBandwidthGBs}, the datasheet peak), got ${block.effectiveBandwidthGBs}`,
      );
  }
  // The floor is what a whole call costs, launch included: below the launch it would mean nothing.
  if (d.kind === 'gpu' && d.gpuModel !== undefined && d.gpuModel.sparseFloorUs < d.launchOverheadUs)
    report(
      ctx,
      'DY3021',
      at('gpuModel', 'sparseFloorUs'),
      `expected at least launchOverheadUs (${d.launchOverheadUs}): the floor of a sparse kernel call includes its launch; got ${d.gpuModel.sparseFloorUs}`,
    );
}

/** One fit per CPU backend, each saying whose it is: the top-level model names its backend, the others are keyed by theirs. */
function checkCpuBackendFits(
  d: Shape['devices'][number],
  at: (...rest: (string | number)[]) => (string | number)[],
  ctx: Ctx,
): void {
  if (d.kind !== 'cpu') return;
  if (d.cpuModelBackend !== undefined && d.cpuModel === undefined)
    report(
      ctx,
      'DY3025',
      at('cpuModelBackend'),
      '"cpuModelBackend" names the backend "cpuModel" was fitted on, and there is no "cpuModel"; add it or remove the field',
    );
  if (d.cpuBackendModels === undefined) return;
  if (d.cpuModelBackend === undefined) {
    report(
      ctx,
      'DY3025',
      at('cpuBackendModels'),
      `"cpuBackendModels" holds the other backends' fits, so "cpuModelBackend" must say which backend "cpuModel" is (one of ${CPU_BACKENDS.join(', ')})`,
    );
    return;
  }
  if (d.cpuBackendModels[d.cpuModelBackend] !== undefined)
    report(
      ctx,
      'DY3025',
      at('cpuBackendModels', d.cpuModelBackend),
      `"cpuModel" is already the ${d.cpuModelBackend} backend's fit ("cpuModelBackend"); a backend has one fit: remove this one or the top-level one`,
    );
}

/** The full schema: shape, then the checks across fields. */
export const systemSchema = systemShapeSchema.superRefine(checkSystem);
