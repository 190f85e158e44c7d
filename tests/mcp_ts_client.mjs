// The MCP host matrix (issue 43 §6) through the TypeScript client libraries most hosts are
// built on, as a new user wires them: the SDK 1.x (`@modelcontextprotocol/sdk`, its
// experimental tasks API for the 2025-11-25 tasks) and the 2.x client
// (`@modelcontextprotocol/client`, with `@modelcontextprotocol/ext-tasks` for tasks).
//
//   node tests/mcp_ts_client.mjs ts1|ts2 '<config JSON>'
//
// The config names the endpoint, a token with every right, a propose-only scoped token and
// the notebook's cells (see bench/mcp_hosts.py, which makes them). Prints one JSON object:
// the library's version and, for each column, {ok, detail}. A column that throws is ✘ with
// the error's text: what the library shows its user.
import { readFileSync } from 'node:fs';

const [library, configText] = process.argv.slice(2);
const config = JSON.parse(configText);
const columns = {};

function version(name) {
  const file = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

function texts(result) {
  return (result.content ?? [])
    .filter(item => item.type === 'text')
    .map(item => item.text)
    .join('\n');
}

async function column(name, check) {
  try {
    const [ok, detail] = await check();
    columns[name] = { ok: Boolean(ok), detail: String(detail).slice(0, 300) };
  } catch (error) {
    columns[name] = {
      ok: false,
      detail: String(error?.message ?? error).slice(0, 300)
    };
  }
}

function headers(token) {
  return token ? { Authorization: `token ${token}` } : {};
}

async function libraryParts() {
  if (library === 'ts1') {
    const { Client } =
      await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } =
      await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    return {
      version: version('@modelcontextprotocol/sdk'),
      connect: async (token, capabilities = {}, setup = () => {}) => {
        const client = new Client(
          { name: 'ts-sdk-1', version: '1' },
          { capabilities }
        );
        setup(client);
        const transport = new StreamableHTTPClientTransport(
          new URL(config.url),
          {
            requestInit: { headers: headers(token) }
          }
        );
        await client.connect(transport);
        return client;
      },
      task: async (client, args) => {
        const seen = [];
        let result;
        const stream = client.experimental.tasks.callToolStream(
          { name: 'run_cells', arguments: args },
          undefined,
          { timeout: 120000 }
        );
        for await (const message of stream) {
          seen.push(message.type);
          if (message.type === 'result') {
            result = message.result;
          } else if (message.type === 'error') {
            throw message.error;
          }
        }
        return { created: seen.includes('taskCreated'), result, seen };
      }
    };
  }
  const { Client, StreamableHTTPClientTransport } =
    await import('@modelcontextprotocol/client');
  const { createTaskSessionFromClient, resultFromTaskOutcome } =
    await import('@modelcontextprotocol/ext-tasks/client');
  return {
    version:
      `${version('@modelcontextprotocol/client')} ` +
      `(ext-tasks ${version('@modelcontextprotocol/ext-tasks')})`,
    connect: async token => {
      const client = new Client(
        { name: 'ts-client-2', version: '1' },
        { capabilities: {} }
      );
      const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: headers(token) }
      });
      await client.connect(transport);
      return client;
    },
    task: async (client, args) => {
      const session = createTaskSessionFromClient(client, {
        endpointId: config.url
      });
      try {
        // run_cells offers a task ("optional"): a caller who wants one says so.
        const execution = await session.callTool('run_cells', args, {
          task: { preference: 'prefer' }
        });
        const { outcome } = await execution.settle();
        const result = resultFromTaskOutcome(outcome);
        return {
          created: execution.kind === 'task',
          result,
          seen: [execution.kind]
        };
      } finally {
        await session.close();
      }
    }
  };
}

const parts = await libraryParts();
const path = config.path;
if (config.inputCell) {
  // A task whose cell asks for input() (TS SDK 1.x, 2025-11-25): the statuses polled,
  // the forms the client was shown (through tasks/result) and the task's result.
  const { ElicitRequestSchema } =
    await import('@modelcontextprotocol/sdk/types.js');
  const steps = { statuses: [], forms: [] };
  const client = await parts.connect(
    config.token,
    { elicitation: { form: {} } },
    made =>
      made.setRequestHandler(ElicitRequestSchema, async request => {
        steps.forms.push(request.params.message);
        return { action: 'accept', content: { answer: config.inputAnswer } };
      })
  );
  await client.listTools(); // the SDK learns there which tools offer a task
  const stream = client.experimental.tasks.callToolStream(
    { name: 'run_cells', arguments: { path, cell_ids: [config.inputCell] } },
    undefined,
    { timeout: 120000 }
  );
  for await (const message of stream) {
    if (message.type === 'taskStatus') {
      steps.statuses.push(message.task.status);
    } else if (message.type === 'result') {
      steps.result = texts(message.result);
    } else if (message.type === 'error') {
      steps.error = String(message.error?.message ?? message.error);
    }
  }
  await client.close();
  console.log(JSON.stringify(steps));
  process.exit(0);
}
if (config.cancelCell) {
  // A task cancelled while its cell runs (TS SDK 1.x): what each step answered.
  const client = await parts.connect(config.token);
  await client.listTools(); // the SDK learns there which tools offer a task
  const steps = {};
  const stream = client.experimental.tasks.callToolStream(
    { name: 'run_cells', arguments: { path, cell_ids: [config.cancelCell] } },
    undefined,
    { timeout: 120000 }
  );
  for await (const message of stream) {
    if (message.type === 'taskCreated') {
      steps.created = message.task.status;
      await new Promise(resolve => setTimeout(resolve, config.cancelAfterMs));
      const tasks = client.experimental.tasks;
      steps.cancelled = (await tasks.cancelTask(message.task.taskId)).status;
      steps.polled = (await tasks.getTask(message.task.taskId)).status;
      try {
        await tasks.cancelTask(message.task.taskId);
        steps.again = 'accepted';
      } catch (error) {
        steps.again = String(error?.message ?? error);
      }
      break;
    }
  }
  await client.close();
  console.log(JSON.stringify(steps));
  process.exit(0);
}
let client;
await column('connect', async () => {
  client = await parts.connect(config.token);
  return [true, 'connected'];
});
if (client) {
  const call = (name, args) =>
    client.callTool({ name, arguments: { path, ...args } }, undefined, {
      timeout: 120000
    });
  await column('list', async () => {
    const { tools } = await client.listTools();
    const names = tools.map(tool => tool.name);
    const run = tools.find(tool => tool.name === 'run_cells');
    return [
      names.includes('run_cells') && run?.annotations,
      `${names.length} tools`
    ];
  });
  await column('read text', async () => {
    const text = texts(await call('read_cell', { cell_id: config.textCell }));
    return [text.includes(config.marker), text.slice(0, 80)];
  });
  await column('image', async () => {
    const result = await call('read_cell', { cell_id: config.imageCell });
    const images = result.content.filter(item => item.type === 'image');
    return [
      images.length === 1 && images[0].mimeType === 'image/png',
      `${images.length} image`
    ];
  });
  await column('resource', async () => {
    const result = await call('get_outputs', { cell_id: config.longCell });
    const link = result.content.find(item => item.type === 'resource_link');
    const read = await client.readResource({ uri: link.uri });
    const text = read.contents[0].text ?? '';
    return [text.length > 2000, `${text.length} characters`];
  });
  await column('run', async () => {
    const result = await call('run_cells', { cell_ids: [config.textCell] });
    return [
      !result.isError && texts(result).includes(config.marker),
      texts(result).slice(0, 80)
    ];
  });
  await column('task', async () => {
    const { created, result, seen } = await parts.task(client, {
      path,
      cell_ids: [config.textCell]
    });
    const text = result ? texts(result) : '';
    return [
      created && text.includes(config.marker),
      `${seen.join(' → ')}: ${text.slice(0, 60)}`
    ];
  });
  await column('propose', async () => {
    const text = texts(
      await call('propose_insert', { source: 'x = 1', summary: 'matrix' })
    );
    return [text.includes('Proposal'), text.slice(0, 80)];
  });
  await client.close();
}
await column('scope refusal', async () => {
  const scoped = await parts.connect(config.scopedToken);
  try {
    const result = await scoped.callTool({
      name: 'run_cells',
      arguments: { path, cell_ids: [config.textCell] }
    });
    return [
      result.isError && texts(result).includes(config.refusedWords),
      texts(result)
    ];
  } finally {
    await scoped.close();
  }
});
await column('error text', async () => {
  try {
    await parts.connect('');
    return [false, 'connected without a token'];
  } catch (error) {
    const text = String(error?.message ?? error);
    return [text.includes(config.unauthenticatedWords), text];
  }
});
console.log(JSON.stringify({ library, version: parts.version, columns }));
process.exit(0);
