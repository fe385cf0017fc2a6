export { LocalJobBus, ALL_POOLS } from './local-job.bus';
