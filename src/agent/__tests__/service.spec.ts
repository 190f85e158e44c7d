import { ServerConnection } from '@jupyterlab/services';

import { AgentService } from '../service';
import { FakeAgentClient, responseError } from './fakeclient';

describe('AgentService', () => {
  let client: FakeAgentClient;
  let notices: string[];
  let service: AgentService;

  beforeEach(() => {
    client = new FakeAgentClient();
    notices = [];
    service = new AgentService({
      client,
      notify: (message, level) => notices.push(`${level}: ${message}`),
      reconnectDelays: [5, 10]
    });
  });

  afterEach(() => service.dispose());

  it('uses the server default model unless one is chosen', async () => {
    await service.refreshModels();
    expect(service.model).toBe('scripted-tools');
    const saved: string[] = [];
    service.persistModel = async model => {
      saved.push(model);
    };
    service.chooseModel('scripted-plain');
    expect(service.model).toBe('scripted-plain');
    expect(saved).toEqual(['scripted-plain']);
  });

  it('asks for the models of the provider the settings name', async () => {
    service.setSettings({ provider: 'ollama' });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(client.calls).toEqual([{ name: 'models', args: ['ollama'] }]);
  });

  it('keeps the configuration hint when no provider is configured', async () => {
    client.modelsReply = {
      provider: '',
      configured: false,
      default_model: null,
      models: [],
      hint: 'Set OPENAI_API_KEY (or c.JupyterLoopApp.openai_api_key).'
    };
    await service.refreshModels();
    expect(service.models?.configured).toBe(false);
    expect(service.models?.hint).toContain('c.JupyterLoopApp.openai_api_key');
    expect(service.model).toBe('');
  });

  it('says errors in plain words, and a missing server extension as such', () => {
    service.report(responseError(409, 'Already running.'), 'Not sent');
    service.report(responseError(404, 'Not Found'), 'Not loaded');
    expect(notices).toEqual([
      'error: Not sent: Already running.',
      "error: Not loaded: The server has no AI agent: jupyter-loop's server extension is not running, or is too old."
    ]);
  });

  it('retries with backoff until the server answers again', async () => {
    const lost = new ServerConnection.NetworkError(
      new TypeError('Failed to fetch')
    );
    client.fail('models', lost, lost);
    let reconnected = 0;
    service.reconnected.connect(() => reconnected++);
    await service.refreshModels();
    expect(service.connection).toBe('lost');
    await new Promise(resolve => setTimeout(resolve, 60));
    expect(service.connection).toBe('connected');
    expect(client.names()).toEqual(['models', 'models', 'models']);
    expect(reconnected).toBe(1);
  });

  it('names users as the conversation shows them', () => {
    service.setIdentity({ username: 'u1', name: 'Ada' });
    expect(service.displayName('u1')).toBe('You');
    expect(service.displayName('Grace')).toBe('Grace');
    expect(service.displayName('60d4b60c4b2b4dd8b26a5ef253fb0379')).toBe('');
    expect(service.displayName(undefined)).toBe('');
  });
});
