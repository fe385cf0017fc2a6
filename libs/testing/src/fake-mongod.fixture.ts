import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { BSON, Long, ObjectId } from 'mongodb';
import type { Document } from 'mongodb';

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

/** Commands that write (or need the primary); a member that is not primary refuses them. */
const PRIMARY_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify', 'createIndexes', 'dropIndexes', 'commitTransaction', 'abortTransaction']);
/** Commands that read: a secondary serves them only when the read preference allows a secondary. */
const READ_COMMANDS = new Set(['find', 'aggregate', 'count', 'distinct', 'getMore']);

/**
 * A stand-in for mongod that speaks just enough of the wire protocol for the driver to connect, and
 * records every command it receives with empty answers, or the answers a test chose (`serverReplies`
 * has the errors a real server sends). It shows what the stores send (write and read concerns,
 * retryable-write transaction numbers, filters) and what they do with an answer, never how a real
 * server would answer: it stores and filters nothing. `stepDown()` makes it a secondary of a set with
 * no primary, answering as such a member does, until `stepUp()`.
 */
export class FakeMongod {
  readonly commands: Document[] = [];
  private readonly answers = new Map<string, (command: Document) => Document>();
  private readonly queued = new Map<string, Array<(command: Document) => Document>>();
  private readonly sockets = new Set<Socket>();
  private primary = true;
  /** The election that made it primary; a later one has a greater id (a driver ignores a primary from an older election). */
  private electionId = new ObjectId();
  private constructor(
    private readonly server: Server,
    private readonly replicaSet: boolean,
  ) {}

  static async start(options: { replicaSet: boolean }): Promise<FakeMongod> {
    const server = createServer();
    const fake = new FakeMongod(server, options.replicaSet);
    server.on('connection', (socket) => fake.serve(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `mongodb://127.0.0.1:${this.port}/gi-fake?directConnection=true`;
  }

  /** The URL of the replica set this member says it belongs to: the driver discovers it and looks for its primary. */
  get replicaSetUrl(): string {
    return `mongodb://127.0.0.1:${this.port}/gi-fake?replicaSet=rs0`;
  }

  private get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * Answers the commands named `name` with what `reply` returns instead of the empty answer: documents
   * for a find (see cursorReply), a count for a delete, or a server error ({ ok: 0, code, errmsg }).
   */
  answer(name: string, reply: (command: Document) => Document): void {
    this.answers.set(name, reply);
  }

  /** Answers the next commands named `name`, one reply each, before any other answer. */
  answerNext(name: string, ...replies: Array<(command: Document) => Document>): void {
    this.queued.set(name, [...(this.queued.get(name) ?? []), ...replies]);
  }

  /** From now on a secondary in a set without a primary (an election under way). */
  stepDown(): void {
    this.primary = false;
  }

  /** The primary again (it won the election). */
  stepUp(): void {
    this.primary = true;
    this.electionId = new ObjectId();
  }

  /** The recorded commands named `name` (monitoring hellos left out unless asked for). */
  named(name: string): Document[] {
    return this.commands.filter((command) => Object.keys(command)[0] === name);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 4 && buffer.length >= buffer.readInt32LE(0)) {
        const message = buffer.subarray(0, buffer.readInt32LE(0));
        buffer = buffer.subarray(message.length);
        this.respond(socket, message);
      }
    });
  }

  private respond(socket: Socket, message: Buffer): void {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    if (opCode === OP_QUERY) {
      // Legacy handshake: flags, collection name, skip, limit, then the command document.
      const nameEnd = message.indexOf(0, 20);
      const command = BSON.deserialize(message.subarray(nameEnd + 9));
      socket.write(opReply(requestId, this.reply(command)));
    } else if (opCode === OP_MSG) {
      const command = readOpMsgBody(message);
      socket.write(opMsg(requestId, this.reply(command)));
    }
  }

  private reply(command: Document): Document {
    const name = Object.keys(command)[0];
    if (!['hello', 'isMaster', 'ismaster'].includes(name)) this.commands.push(command);
    const next = this.queued.get(name)?.shift();
    if (next) return next(command);
    if (!this.primary && PRIMARY_COMMANDS.has(name)) return serverReplies.notWritablePrimary(command);
    if (!this.primary && READ_COMMANDS.has(name) && !readsFromSecondary(command)) return serverReplies.notPrimaryNoSecondaryOk();
    const chosen = this.answers.get(name);
    if (chosen) return chosen(command);
    const address = `127.0.0.1:${this.port}`;
    switch (name) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return {
          helloOk: true,
          ismaster: this.primary,
          isWritablePrimary: this.primary,
          ...(this.primary ? {} : { secondary: true }),
          ...(this.replicaSet
            ? { setName: 'rs0', setVersion: 1, hosts: [address], me: address, ...(this.primary ? { primary: address, electionId: this.electionId } : {}) }
            : {}),
          maxBsonObjectSize: 16 * 1024 * 1024,
          maxMessageSizeBytes: 48_000_000,
          maxWriteBatchSize: 100_000,
          localTime: new Date(),
          logicalSessionTimeoutMinutes: 30,
          connectionId: 1,
          minWireVersion: 0,
          maxWireVersion: 21,
          readOnly: false,
          ok: 1,
        };
      case 'find':
      case 'aggregate':
        return cursorReply(command, []);
      case 'findAndModify':
        return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
      case 'insert':
        return { n: Array.isArray(command.documents) ? command.documents.length : 1, ok: 1 };
      case 'update':
        return { n: 0, nModified: 0, ok: 1 };
      case 'delete':
        return { n: 0, ok: 1 };
      case 'distinct':
        return { values: [], ok: 1 };
      case 'createIndexes':
        return { numIndexesBefore: 1, numIndexesAfter: 1 + (command.indexes as unknown[]).length, ok: 1 };
      default:
        return { ok: 1 };
    }
  }
}

/** A read the driver marked as one a secondary may serve (a direct connection reads primaryPreferred). */
function readsFromSecondary(command: Document): boolean {
  const mode = (command.$readPreference as { mode?: string } | undefined)?.mode;
  return mode !== undefined && mode !== 'primary';
}

/** A key pattern and value as the server prints them in an E11000 message: `{ botId: "bot-a", key: "k1" }`. */
function printKey(keyValue: Document): string {
  return `{ ${Object.entries(keyValue)
    .map(([field, value]) => `${field}: ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
    .join(', ')} }`;
}

/**
 * Replies of a real mongod (6.0 to 8.0) for the failures the stores must handle, as MongoDB documents
 * them and as the driver (mongodb 7.9) reads them: write concern errors ride on an `ok: 1` reply
 * (the write itself was applied), write errors of a write (E11000) too, other errors are `ok: 0` with
 * a code, a code name and the labels the server adds.
 */
export const serverReplies = {
  /**
   * The majority did not confirm within wtimeout. The write stays on the primary. Servers before 8.1
   * name code 64 WriteConcernFailed, 8.1 and later WriteConcernTimeout; no label (the code is not retryable).
   */
  writeConcernTimeout(reply: Document = { n: 1 }, wtimeout = 10_000): Document {
    return {
      ...reply,
      ok: 1,
      writeConcernError: {
        code: 64,
        codeName: 'WriteConcernFailed',
        errmsg: 'waiting for replication timed out',
        errInfo: { wtimeout: true, writeConcern: { w: 'majority', wtimeout, provenance: 'clientSupplied' } },
      },
    };
  },

  /** E11000: an insert or update of `command` would break the unique index `index` on `keyValue`'s fields. */
  duplicateKey(command: Document, index: string, keyValue: Document): Document {
    const collection = command[Object.keys(command)[0]] as string;
    const keyPattern = Object.fromEntries(Object.keys(keyValue).map((field) => [field, 1]));
    const errmsg = `E11000 duplicate key error collection: ${command.$db}.${collection} index: ${index} dup key: ${printKey(keyValue)}`;
    return { n: 0, ...(command.update ? { nModified: 0 } : {}), writeErrors: [{ index: 0, code: 11000, errmsg, keyPattern, keyValue }], ok: 1 };
  },

  /**
   * A member that is not primary refuses a write. The server labels the error by what the command was:
   * RetryableWriteError on a retryable write or a commit/abort, TransientTransactionError on a
   * statement of a transaction, nothing on a write that is neither (a multi-document update or delete).
   */
  notWritablePrimary(command: Document): Document {
    const name = Object.keys(command)[0];
    const inTransaction = command.autocommit === false && name !== 'commitTransaction' && name !== 'abortTransaction';
    const errorLabels = command.txnNumber === undefined ? [] : inTransaction ? ['TransientTransactionError'] : ['RetryableWriteError'];
    return { ok: 0, errmsg: 'not primary', code: 10107, codeName: 'NotWritablePrimary', ...(errorLabels.length ? { errorLabels } : {}) };
  },

  /** A secondary refuses a read that must come from the primary. */
  notPrimaryNoSecondaryOk(): Document {
    return { ok: 0, errmsg: 'not primary and secondaryOk=false', code: 13435, codeName: 'NotPrimaryNoSecondaryOk' };
  },

  /** A statement of a transaction met a concurrent write of the same document: the whole transaction may run again. */
  writeConflict(): Document {
    return {
      ok: 0,
      errmsg: 'WriteConflict error: this operation conflicted with another operation. Please retry your operation or multi-document transaction.',
      code: 112,
      codeName: 'WriteConflict',
      errorLabels: ['TransientTransactionError'],
    };
  },

  /** A findAndModify whose result would pass 16 MiB: the server answers it as a command error. */
  documentTooLarge(): Document {
    return { ok: 0, code: 10334, codeName: 'BSONObjectTooLarge', errmsg: 'Resulting document after update is larger than 16777216' };
  },
};

/** The answer to a find or aggregate: all of `documents` in one batch. */
export function cursorReply(command: Document, documents: Document[]): Document {
  const name = Object.keys(command)[0];
  const collection = typeof command[name] === 'string' ? command[name] : '$cmd.aggregate';
  return { cursor: { id: Long.fromNumber(0), ns: `${command.$db}.${collection}`, firstBatch: documents }, ok: 1 };
}

/** The body (section kind 0) of an OP_MSG, with any document sequences (kind 1) folded in. */
function readOpMsgBody(message: Buffer): Document {
  let offset = 20;
  let body: Document = {};
  const sequences: Record<string, Document[]> = {};
  const end = message.readUInt32LE(16) & 1 ? message.length - 4 : message.length;
  while (offset < end) {
    const kind = message[offset];
    offset += 1;
    if (kind === 0) {
      const size = message.readInt32LE(offset);
      body = BSON.deserialize(message.subarray(offset, offset + size));
      offset += size;
    } else {
      const size = message.readInt32LE(offset);
      const sectionEnd = offset + size;
      const idEnd = message.indexOf(0, offset + 4);
      const id = message.toString('utf8', offset + 4, idEnd);
      let at = idEnd + 1;
      sequences[id] = [];
      while (at < sectionEnd) {
        const docSize = message.readInt32LE(at);
        sequences[id].push(BSON.deserialize(message.subarray(at, at + docSize)));
        at += docSize;
      }
      offset = sectionEnd;
    }
  }
  return { ...body, ...sequences };
}

function header(length: number, responseTo: number, opCode: number): Buffer {
  const head = Buffer.alloc(16);
  head.writeInt32LE(length, 0);
  head.writeInt32LE(0, 4);
  head.writeInt32LE(responseTo, 8);
  head.writeInt32LE(opCode, 12);
  return head;
}

function opMsg(responseTo: number, reply: Document): Buffer {
  const body = Buffer.from(BSON.serialize(reply));
  const flags = Buffer.alloc(5); // flagBits 0, then section kind 0
  return Buffer.concat([header(16 + flags.length + body.length, responseTo, OP_MSG), flags, body]);
}

function opReply(responseTo: number, reply: Document): Buffer {
  const body = Buffer.from(BSON.serialize(reply));
  const fields = Buffer.alloc(20);
  fields.writeInt32LE(0, 0); // responseFlags
  fields.writeBigInt64LE(0n, 4); // cursorID
  fields.writeInt32LE(0, 12); // startingFrom
  fields.writeInt32LE(1, 16); // numberReturned
  return Buffer.concat([header(16 + fields.length + body.length, responseTo, OP_REPLY), fields, body]);
}
