import type { CommandSpec } from '../command';
import { callbackSecretRotate, callbackSecretShow } from './callback-secret.commands';
import { connectorInit } from './connector-init.command';
import { connectorRun } from './connector-run.command';
import { connectorDeploy, connectorList, connectorShow } from './connector.commands';
import { botDelete, connectorDelete, entityDelete } from './delete.commands';
import { connectorPublish, connectorReplay } from './drafts.commands';
import { entityCreate, entityList } from './entity.commands';
import { invocationsEvent } from './invocation-event.command';
import { invocationsCancel, invocationsList, invocationsShow, invocationsSteps } from './invocations.commands';
import { invoke } from './invoke.command';
import { quotaSet, quotaShow } from './quota.commands';
import { secretsDelete, secretsList, secretsReseal, secretsSet } from './secrets.commands';
import { tokenCreate, tokenList, tokenRevoke } from './token.commands';
import { connectorDiff, connectorRollback, connectorVersions } from './versions.commands';
import { webhookShow } from './webhook.command';

/** Every command, in the order `gi help` lists them. The service commands (`up`, ...) are handled before these. */
export const COMMANDS: readonly CommandSpec[] = [
  entityCreate,
  entityList,
  entityDelete,
  connectorDeploy,
  connectorShow,
  connectorList,
  connectorVersions,
  connectorDiff,
  connectorRollback,
  connectorReplay,
  connectorPublish,
  connectorDelete,
  connectorRun,
  connectorInit,
  tokenCreate,
  tokenList,
  tokenRevoke,
  quotaShow,
  quotaSet,
  callbackSecretRotate,
  callbackSecretShow,
  secretsSet,
  secretsList,
  secretsDelete,
  secretsReseal,
  webhookShow,
  invoke,
  invocationsList,
  invocationsShow,
  invocationsSteps,
  invocationsEvent,
  invocationsCancel,
  botDelete,
];
