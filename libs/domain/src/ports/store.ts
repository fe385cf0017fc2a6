import type { CatalogStore } from './catalog-store';
import type { InstanceRegistry } from './instance-registry';
import type { InvocationStore } from './invocation-store';
import type { JournalStore } from './journal-store';
import type { SecretStore } from './secret-store';
import type { TokenStore } from './token-store';

/** The whole store of one deployment. */
export interface Store {
  invocations: InvocationStore;
  /** The journals of durable runs. */
  journal: JournalStore;
  catalog: CatalogStore;
  tokens: TokenStore;
  secrets: SecretStore;
  instances: InstanceRegistry;
  /** True when the store answers (readiness). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
