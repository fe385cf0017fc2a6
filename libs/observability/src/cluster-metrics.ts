import { AggregatorRegistry } from 'prom-client';
import type { Registry } from 'prom-client';

/**
 * In a process of a node:cluster: lets the primary read `registry` when it gathers the metrics of every
 * process (prom-client's cluster protocol answers it over the IPC channel).
 */
export function lendMetricsToPrimary(registry: Registry): void {
  AggregatorRegistry.setRegistries(registry);
  // Made once so prom-client listens for the primary's requests in this process.
  new AggregatorRegistry();
}

/**
 * In the primary of a node:cluster: the metrics of every process as one exposition, each metric
 * aggregated its own way (summed unless it says otherwise: `gi_build_info` takes the first, the
 * event-loop lag an average).
 */
export function clusterMetrics(): () => Promise<string> {
  const aggregator = new AggregatorRegistry();
  return () => aggregator.clusterMetrics();
}
