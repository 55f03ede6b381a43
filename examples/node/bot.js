// A Digging Down bot in Node.js, written from protos/ alone (see docs/writing-a-bot.md).
//
//   cd examples/node && npm ci
//   node bot.js --listen 127.0.0.1:50061 [--port-file F] [--ladder HOST:PORT] [--rules-dir DIR]
//   node bot.js --connect HOST:PORT --bot NAME [--token T]   (connect-out mode: connect.js)
//
// It serves digdown.v1.Bot (protos/digdown/v1/bot.proto): Handshake, then one answer per
// decision with a real choice: over one ActStream per game when the runner offers
// protocol 2 (the handshake answers the highest version both speak), else by unary Act. The card table comes from the ruleset document: from the
// ladder (Ladder.GetRuleset, with --ladder) or from the JSON files of the SDK
// (sdk/digdown/rulesets/<id>.json, the same text). The policy is the Python starter bot's
// (examples/starter_bot.py): stand where my tools most likely win, attempt what my tools
// beat, keep two torches to pay for the return.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const REPO = path.resolve(__dirname, '..', '..');
const PROTOS = path.join(REPO, 'protos');

// The proto3 traps (docs/protocol.md), handled by the loader's options:
// - keepCase: field names as in the .proto (`legal_actions`, `tool_id`), as in the docs;
// - defaults: a zero value is absent on the wire; without this, seat 0 reads `undefined`;
// - longs: int64 fields (`time_left_ms`) would be Long objects; Number is exact below 2^53;
// - oneofs: `action.kind` names the field of the Action oneof that is set ("move", ...).
// Message fields (`Passage.top`, `Observation.resolution`) are null when absent.
const LOAD_OPTIONS = {
  includeDirs: [PROTOS],
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};
const definition = protoLoader.loadSync(
  ['digdown/v1/bot.proto', 'digdown/v1/ladder.proto'].map((f) => path.join(PROTOS, f)),
  LOAD_OPTIONS,
);
const digdown = grpc.loadPackageDefinition(definition).digdown.v1;

function parseArgs(argv) {
  const args = { listen: '127.0.0.1:50061', portFile: '', ladder: '', rulesDir: '',
    connect: '', bot: '', token: '' };
  const names = { '--listen': 'listen', '--port-file': 'portFile', '--ladder': 'ladder',
    '--rules-dir': 'rulesDir', '--connect': 'connect', '--bot': 'bot', '--token': 'token' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) {
      throw new Error(`usage: node bot.js [--listen ADDR] [--port-file F] [--ladder ADDR] [--rules-dir DIR] [--connect ADDR --bot NAME [--token T]] (bad: ${argv[i]})`);
    }
    args[key] = argv[i + 1];
  }
  args.rulesDir = args.rulesDir || path.join(REPO, 'sdk', 'digdown', 'rulesets');
  return args;
}

// --- the card data -----------------------------------------------------------------

const rulesets = new Map(); // ruleset id -> parsed document

function fetchRuleset(ladder, id) {
  const client = new digdown.Ladder(ladder, grpc.credentials.createInsecure());
  const deadline = new Date(Date.now() + 10000); // every call has a deadline
  return new Promise((resolve, reject) => {
    client.GetRuleset({ ruleset: id }, { deadline }, (err, reply) => {
      client.close();
      if (err) reject(new Error(`GetRuleset ${id}: ${err.details || err.message}`));
      else resolve(JSON.parse(reply.json));
    });
  });
}

async function ruleset(args, id) {
  if (!rulesets.has(id)) {
    const doc = args.ladder
      ? await fetchRuleset(args.ladder, id)
      : JSON.parse(fs.readFileSync(path.join(args.rulesDir, `${id}.json`), 'utf8'));
    rulesets.set(id, doc);
  }
  return rulesets.get(id);
}

// --- the policy --------------------------------------------------------------------

// An Action message as the loader gives it: {kind: "move", move: {passage: 2}, ...}.
const kindOf = (action) => action.kind;

function choose(obs, legal, rules) {
  const me = obs.players[obs.seat];
  const power = { PICKAXE: 0, SWORD: 0 };
  for (const tool of me.tools) if (tool.active) power[tool.kind] += tool.strength;
  const first = {};
  for (const action of legal) if (!(kindOf(action) in first)) first[kindOf(action)] = action;

  // How likely my active tools beat the top card of a passage: known face, or the unseen
  // faces of its material weighted by how many are left.
  const chance = (passage) => {
    if (passage.top) return power[passage.top.tool] >= passage.top.strength ? 1 : 0;
    const material = passage.backs[passage.backs.length - 1];
    let total = 0;
    let beaten = 0;
    for (const u of obs.unseen) {
      if (u.material !== material) continue;
      const row = rules.cave.find((r) => r.material === u.material && r.name === u.name);
      total += u.count;
      if (power[row.tool] >= row.strength) beaten += u.count;
    }
    return total ? beaten / total : 0;
  };

  switch (obs.phase) {
    case 'BASE': {
      const free = me.capacity - me.torches - Object.values(me.items).reduce((a, b) => a + b, 0);
      for (const kind of ['exchange', free > 0 ? 'unstash' : '', 'done', 'discard']) {
        if (first[kind]) return first[kind];
      }
      break;
    }
    case 'DECIDE':
      if (first.explore && me.torches > 2) return first.explore;
      return first.continue_exploring || first.return_to_base;
    case 'POSITION': {
      const options = legal.filter((a) => a.kind === 'ready' || a.kind === 'move');
      const where = (a) => (a.kind === 'move' ? a.move.passage : me.position);
      return options.reduce((best, a) =>
        chance(obs.passages[where(a)]) > chance(obs.passages[where(best)]) ? a : best);
    }
    case 'RESOLVE': {
      const card = obs.resolution.card;
      if (first.attempt) return power[card.tool] >= card.strength ? first.attempt : first.leave;
      return first.commit || first.stop;
    }
    default:
      break;
  }
  return legal[0];
}

// --- the service -------------------------------------------------------------------

const PROTOCOL_VERSION = 2; // the highest Bot protocol this bot speaks (2: ActStream)

function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.connect) {
    // Connect out: no port is opened; the ladder sends the decisions on our stream.
    const decide = (request) => ruleset(args, request.observation.ruleset)
      .then((rules) => choose(request.observation, request.legal_actions, rules));
    require('./connect.js').connect(digdown, args, decide,
      { name: 'node-starter', version: '1', protocol_version: 1 });
    return;
  }
  const server = new grpc.Server();
  let decisions = 0;
  // One decision: the DecisionReply for a DecisionRequest (a rejected promise is a fault).
  const decide = async (request) => {
    const rules = await ruleset(args, request.observation.ruleset);
    decisions += 1;
    return { action: choose(request.observation, request.legal_actions, rules) };
  };
  server.addService(digdown.Bot.service, {
    Handshake(call, callback) {
      // Answer the highest version both speak: an older runner offers 1 (or nothing).
      const offered = call.request.protocol_version || 1;
      const chosen = Math.min(offered, PROTOCOL_VERSION);
      callback(null, { name: 'node-starter', version: '1', protocol_version: chosen });
    },
    Act(call, callback) {
      decide(call.request)
        .then((reply) => callback(null, reply))
        .catch((err) => {
          // An error status is a fault: the runner records this text as its reason.
          callback({ code: grpc.status.INTERNAL, details: `bot error: ${err.message}` });
        });
    },
    // Protocol 2: one stream per game; exactly one reply per request, in order. The
    // requests are answered one after the other (a chain of promises), so a slow first
    // ruleset fetch cannot reorder the replies. An error ends the stream with a status:
    // the runner counts a fault and opens a new stream for the next decision.
    ActStream(call) {
      let chain = Promise.resolve();
      let open = true; // false once the runner cancelled (a timeout) or the stream failed
      call.on('cancelled', () => { open = false; });
      call.on('data', (request) => {
        chain = chain
          .then(() => decide(request))
          .then((reply) => { if (open) call.write(reply); })
          .catch((err) => {
            if (!open) return;
            open = false;
            // grpc-js ends a server stream with this status (a fault of this decision).
            call.emit('error', { code: grpc.status.INTERNAL, details: `bot error: ${err.message}` });
          });
      });
      call.on('end', () => chain.then(() => { if (open) call.end(); }));
    },
  });
  server.bindAsync(args.listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${args.listen}: ${err.message}`);
      process.exit(2);
    }
    console.error(`node bot listening on ${args.listen.replace(/:0$/, `:${port}`)}`);
    if (args.portFile) {
      fs.writeFileSync(`${args.portFile}.tmp`, String(port));
      fs.renameSync(`${args.portFile}.tmp`, args.portFile); // atomic: never read half-written
    }
  });
  const stop = (signal) => {
    console.error(`${signal}: stopping after ${decisions} decisions`);
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref(); // running calls get 2 s
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
