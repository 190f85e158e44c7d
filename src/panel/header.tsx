import { NotebookPanel } from '@jupyterlab/notebook';
import * as React from 'react';

import { AgentService } from '../agent/service';
import { AgentSession } from '../agent/session';
import { useSignal } from './hooks';

/** The panel's title, its model picker and New conversation. */
export function Header(props: {
  service: AgentService;
  notebook: NotebookPanel | null;
  session: AgentSession | null;
}): JSX.Element {
  const { service, notebook, session } = props;
  const models = service.models;
  const chosen = service.model;
  const options = models?.models ?? [];
  const list =
    chosen && !options.includes(chosen) ? [chosen, ...options] : options;
  return (
    <header className="jp-Loop-AgentView-header">
      <div className="jp-Loop-AgentView-title">
        <span className="jp-Loop-AgentView-name">AI assistant</span>
        {notebook && (
          <span
            className="jp-Loop-AgentView-notebook"
            title={notebook.context.path}
          >
            {notebook.title.label}
          </span>
        )}
      </div>
      <AgentPicker service={service} />
      <label className="jp-Loop-ModelPicker">
        <span className="jp-Loop-ModelPicker-label">Model</span>
        <select
          className="jp-Loop-ModelPicker-select"
          aria-label="Model"
          value={chosen}
          disabled={!models?.configured || list.length === 0}
          onChange={event => service.chooseModel(event.target.value)}
        >
          {list.length === 0 && <option value="">(none)</option>}
          {list.map(model => (
            <option key={model} value={model}>
              {model}
            </option>
          ))}
        </select>
      </label>
      {session && <NewConversationButton session={session} />}
    </header>
  );
}

/**
 * The agent new turns go to: the assistant, or an ACP agent the server hosts
 * (`GET agents`). Shown only when the server offers one; an agent that cannot
 * start is listed, disabled, with the server's reason as its tooltip.
 */
function AgentPicker(props: { service: AgentService }): JSX.Element | null {
  const { service } = props;
  const agents = service.agents;
  if (!agents.some(agent => agent.kind === 'acp')) {
    return null;
  }
  return (
    <label className="jp-Loop-ModelPicker">
      <span className="jp-Loop-ModelPicker-label">Agent</span>
      <select
        className="jp-Loop-ModelPicker-select jp-Loop-AgentPicker-select"
        aria-label="Agent"
        value={service.agent}
        onChange={event => service.chooseAgent(event.target.value)}
      >
        {agents.map(agent => (
          <option
            key={agent.name}
            value={agent.name}
            disabled={!agent.available && agent.name !== service.agent}
            title={agent.why_not ?? undefined}
          >
            {agent.label}
            {agent.available ? '' : ' (unavailable)'}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * Start a new conversation on the notebook: every tab's panel empties and the
 * model is sent none of the earlier messages. Disabled while a turn runs (the
 * server would refuse it).
 */
function NewConversationButton(props: { session: AgentSession }): JSX.Element {
  const { session } = props;
  useSignal(session.changed);
  useSignal(session.conversation.changed);
  const busy = session.conversation.isBusy;
  return (
    <button
      className="jp-Button jp-mod-styled jp-Loop-NewConversation"
      aria-label="New conversation"
      title={
        busy
          ? 'Stop the turn or wait for it to end to start a new conversation'
          : 'Start a new conversation: the assistant forgets this one (the journal keeps it)'
      }
      disabled={busy || session.isPending('new-conversation')}
      onClick={() => void session.newConversation()}
    >
      New conversation
    </button>
  );
}

/**
 * What keeps the assistant from answering, said above the conversation: a lost
 * connection, no model provider, a model server that did not answer.
 */
export function Banners(props: { service: AgentService }): JSX.Element | null {
  const { service } = props;
  if (service.connection === 'lost') {
    return (
      <div className="jp-Loop-Banner jp-mod-warning" role="alert">
        <strong>Lost the connection to the Jupyter server.</strong>{' '}
        Reconnecting… Nothing is lost: the assistant keeps working on the
        server, and your message stays here until it can be sent.
      </div>
    );
  }
  const models = service.models;
  if (models && !models.configured) {
    return <ConfigHint hint={models.hint ?? ''} />;
  }
  if (models && models.models.length === 0 && models.hint) {
    return (
      <div className="jp-Loop-Banner jp-mod-warning" role="alert">
        <strong>The model server did not answer.</strong> {models.hint}{' '}
        <RetryModels service={service} />
      </div>
    );
  }
  if (!models && service.modelsError) {
    return (
      <div className="jp-Loop-Banner jp-mod-error" role="alert">
        {service.modelsError} <RetryModels service={service} />
      </div>
    );
  }
  return null;
}

/**
 * The one line that gives the server a provider, to copy; where the other ways are.
 *
 * Short, because the panel is often 250 px wide: the server's whole hint (every
 * setting, one paragraph) is kept behind "Other providers", and the command is one
 * unbroken line that scrolls rather than wrapping inside a word. Rejected: the whole
 * hint in a pre-wrap block breaking anywhere, which ran to ~30 lines at 250 px with
 * `openai_a` / `pi_key` split across lines and its heading said twice.
 */
export function ConfigHint(props: { hint: string }): JSX.Element {
  const rest = props.hint.replace(/^No model provider is configured\.\s*/, '');
  return (
    <div
      className="jp-Loop-Banner jp-mod-error jp-Loop-ConfigHint"
      role="alert"
    >
      <strong>No model provider is configured.</strong>
      <p>Start the server with one, for example:</p>
      <code className="jp-Loop-ConfigHint-command">{SETUP_COMMAND}</code>
      <details className="jp-Loop-ConfigHint-more">
        <summary>Other providers (Ollama, a local server)</summary>
        <p className="jp-Loop-ConfigHint-text">{rest}</p>
        <a href={CONFIGURATION_PAGE} target="_blank" rel="noopener noreferrer">
          Every setting (configuration.md)
        </a>
      </details>
    </div>
  );
}

/** What most people need: an OpenAI key in the environment of the server. */
export const SETUP_COMMAND = 'OPENAI_API_KEY=sk-… jupyter lab';

/**
 * The configuration page of the manual (docs/configuration.md), in the repository
 * package.json names (a test keeps the two the same: change both when it moves).
 */
export const REPOSITORY = 'https://example.invalid/jupyter-loop';
export const CONFIGURATION_PAGE = `${REPOSITORY}/blob/main/docs/configuration.md`;

/** Ask the model server for its models again. */
function RetryModels(props: { service: AgentService }): JSX.Element {
  return (
    <button
      className="jp-Button jp-mod-styled jp-Loop-retry"
      onClick={() => void props.service.refreshModels()}
    >
      Retry
    </button>
  );
}
