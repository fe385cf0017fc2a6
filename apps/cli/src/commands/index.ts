import type { CommandSpec } from '../command';
import { connectorDeploy, connectorList, connectorShow } from './connector.commands';
import { entityCreate, entityList } from './entity.commands';
import { invocationsList, invocationsShow } from './invocations.commands';
import { invoke } from './invoke.command';
import { tokenCreate, tokenList, tokenRevoke } from './token.commands';
import { webhookShow } from './webhook.command';

/** Every admin command, in the order `gi help` lists them. `up` is handled before these. */
export const COMMANDS: readonly CommandSpec[] = [
  entityCreate,
  entityList,
  connectorDeploy,
  connectorShow,
  connectorList,
  tokenCreate,
  tokenList,
  tokenRevoke,
  webhookShow,
  invoke,
  invocationsList,
  invocationsShow,
];
