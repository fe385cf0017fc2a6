import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { BSON, Long, ObjectId } from 'mongodb';
import type { Document } from 'mongodb';

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

/**
 * A stand-in for mongod that speaks just enough of the wire protocol for the driver to connect, and
 * records every command it receives with empty answers, or the answers a test chose. It shows what the
 * stores send (write and read concerns, retryable-write transaction numbers, filters) and what they do
 * with an answer, never how a real server would answer: it stores and filters nothing.
 */
export class FakeMongod {
  readonly commands: Document[] = [];
  private readonly answers = new Map<string, (command: Document) => Document>();
  private readonly sockets = new Set<Socket>();
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
    return `mongodb://127.0.0.1:${(this.server.address() as AddressInfo).port}/gi-fake?directConnection=true`;
  }

  /**
   * Answers the commands named `name` with what `reply` returns instead of the empty answer: documents
   * for a find (see cursorReply), a count for a delete, or a server error ({ ok: 0, code, errmsg }).
   */
  answer(name: string, reply: (command: Document) => Document): void {
    this.answers.set(name, reply);
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
    const chosen = this.answers.get(name);
    if (chosen) return chosen(command);
    const address = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    switch (name) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return {
          helloOk: true,
          ismaster: true,
          isWritablePrimary: true,
          ...(this.replicaSet ? { setName: 'rs0', setVersion: 1, hosts: [address], primary: address, me: address, electionId: new ObjectId() } : {}),
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
