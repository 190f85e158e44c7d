import * as React from 'react';

import { AgentSession } from '../agent/session';
import { ServerFigures } from '../serverfigures';
import { IServerStatus, ITokenBudget } from '../payloads';
import { formatTokens, useSignal } from './hooks';

/**
 * The foot line's words for the day's token budget; null when there is no cap
 * (nothing to watch) or no answer yet.
 */
export function budgetText(
  tokens: ITokenBudget | null | undefined
): string | null {
  if (!tokens || tokens.limit === null) {
    return null;
  }
  const left = tokens.left ?? Math.max(0, tokens.limit - tokens.used);
  return left > 0
    ? `${formatTokens(tokens.used)} of ${formatTokens(tokens.limit)} tokens used · ${formatTokens(left)} left`
    : `all ${formatTokens(tokens.limit)} tokens used · new turns wait until 00:00 UTC`;
}

/**
 * One line at the foot of the panel: the model tokens you used today against
 * the administrator's daily cap (turns and completions count alike). Asked
 * again a moment after the conversation changes, so a turn's cost shows once
 * it ends.
 */
export function BudgetLine(props: {
  budget: ServerFigures<IServerStatus>;
  session: AgentSession | null;
}): JSX.Element | null {
  const { budget, session } = props;
  useSignal(budget.changed);
  React.useEffect(() => {
    if (!session) {
      return;
    }
    const soon = () => budget.refreshSoon();
    session.conversation.changed.connect(soon);
    return () => {
      session.conversation.changed.disconnect(soon);
    };
  }, [budget, session]);
  const tokens = budget.value?.tokens;
  const text = budgetText(tokens);
  if (!text || !tokens) {
    return null;
  }
  const title =
    `Model tokens (input and output) you used on ${tokens.day} (UTC), in turns ` +
    `and inline completions, under this server's daily cap of ${tokens.limit}.`;
  return (
    <footer className="jp-Loop-BudgetLine" title={title}>
      <span className="jp-Loop-BudgetLine-label">Today:</span> {text}
    </footer>
  );
}
