import { LocalJobBus } from '@gi/bus-local';
import { describeBusContract } from './bus.contract';

describeBusContract('in-process', async () => {
  const bus = new LocalJobBus();
  return { bus, dispose: () => bus.close() };
});
