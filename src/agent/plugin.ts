import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { IAgentService } from '../tokens';
import { AgentClient } from './client';
import { AgentService } from './service';
import { DEFAULT_SETTINGS, IAgentSettings } from './settings';

const PLUGIN_ID = 'jupyter-loop:agent';

/**
 * The agent's state in the browser: the server's models, the settings of
 * schema/agent.json, the connection, and a session per open notebook.
 */
export const agentPlugin: JupyterFrontEndPlugin<AgentService> = {
  id: PLUGIN_ID,
  description:
    'The AI agent: conversations, proposals and approvals of open notebooks.',
  autoStart: true,
  provides: IAgentService,
  optional: [ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    registry: ISettingRegistry | null
  ): AgentService => {
    const service = new AgentService({
      client: new AgentClient(),
      notify: (message, level) =>
        Notification.emit(message, level, { autoClose: 8000 })
    });
    if (registry) {
      void registry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () => service.setSettings(readSettings(settings));
          apply();
          settings.changed.connect(apply);
          service.persistModel = model => settings.set('model', model);
        })
        .catch(reason => {
          console.warn('jupyter-loop: the agent settings did not load', reason);
        });
    }
    void app.serviceManager.user.ready
      .then(() => service.setIdentity(app.serviceManager.user.identity))
      .catch(() => undefined);
    void service.refreshModels();
    void service.refreshAgents();
    return service;
  }
};

/** The settings as the service takes them, defaults for missing values. */
function readSettings(settings: ISettingRegistry.ISettings): IAgentSettings {
  const get = <T>(key: keyof IAgentSettings): T =>
    (settings.get(key).composite ?? DEFAULT_SETTINGS[key]) as T;
  return {
    provider: get<string>('provider'),
    model: get<string>('model'),
    approvalPolicy: get<IAgentSettings['approvalPolicy']>('approvalPolicy'),
    maxSteps: get<number>('maxSteps')
  };
}
