export { AmqpJobBus } from './amqp-job.bus';
export type { AmqpJobBusOptions, BusLogger } from './amqp-bus.options';
export { BACKLOG_AFTER, busNames, busTopology, declareTopology, deleteTopology, laneQueueName, LANES, poolQueueName } from './amqp-topology';
export type { BusNames, Lane, Topology, TopologyChannel } from './amqp-topology';
