export { AmqpJobBus } from './amqp-job.bus';
export type { AmqpJobBusOptions, BusLogger } from './amqp-bus.options';
export { busNames, busTopology, declareTopology, deleteTopology, poolQueueName } from './amqp-topology';
export type { BusNames, Topology, TopologyChannel } from './amqp-topology';
