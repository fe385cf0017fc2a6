import { CONNECTOR_LIMIT_BOUNDS, DEFAULT_CONNECTOR_LIMITS, type ConnectorLimits } from '@gi/domain';
import type { OptionSpecs } from '../command';
import type { CommandInput } from '../command-input';

/** Each integration limit as a command-line option, with the unit it is given in. */
const LIMIT_FLAGS: ReadonlyArray<{ flag: string; key: keyof ConnectorLimits; value: string; what: string }> = [
  { flag: 'memory-mib', key: 'memoryMiB', value: 'MIB', what: 'Memory of one run, in MiB' },
  { flag: 'cpu-seconds', key: 'cpuSeconds', value: 'SECONDS', what: "CPU time of one run (its code and its crypto work), in seconds" },
  { flag: 'response-body-kib', key: 'responseBodyKiB', value: 'KIB', what: 'Largest ResponseBody, as JSON, in KiB' },
  { flag: 'log-kib', key: 'logKiB', value: 'KIB', what: 'Log one run may write, in KiB' },
  { flag: 'pending-calls', key: 'pendingCalls', value: 'N', what: 'HTTP requests, file reads and crypto operations one run may have in flight' },
];

/** The options of `connector deploy` and `connector run` that set limits: the names and bounds of the control API. */
export const limitOptions: OptionSpecs = Object.fromEntries(
  LIMIT_FLAGS.map(({ flag, key, value, what }) => {
    const { min, max } = CONNECTOR_LIMIT_BOUNDS[key];
    return [flag, { type: 'string', value, description: `${what} (default ${DEFAULT_CONNECTOR_LIMITS[key]}, ${min}-${max})` }];
  }),
);

/** The limits given on the command line; the others are left out. */
export function readLimits(input: CommandInput): Partial<ConnectorLimits> {
  const limits: Partial<ConnectorLimits> = {};
  for (const { flag, key } of LIMIT_FLAGS) {
    const value = input.int(flag, CONNECTOR_LIMIT_BOUNDS[key].min, CONNECTOR_LIMIT_BOUNDS[key].max);
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/** Limits as one line, e.g. "memory 64 MiB, CPU 60 s, ResponseBody 10240 KiB, log 64 KiB, 8 pending calls". */
export const describeLimits = (limits: ConnectorLimits) =>
  `memory ${limits.memoryMiB} MiB, CPU ${limits.cpuSeconds} s, ResponseBody ${limits.responseBodyKiB} KiB, log ${limits.logKiB} KiB, ${limits.pendingCalls} pending calls`;
