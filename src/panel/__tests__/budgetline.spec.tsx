import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { ServerFigures } from '../../serverfigures';
import { IServerStatus, ITokenBudget } from '../../payloads';
import { BudgetLine, budgetText } from '../budgetline';

function tokens(used: number, limit: number | null): ITokenBudget {
  const left = limit === null ? null : Math.max(0, limit - used);
  return { day: '2026-11-27', used, limit, left };
}

describe('budgetText', () => {
  it('says nothing without a cap', () => {
    expect(budgetText(tokens(12_345, null))).toBeNull();
    expect(budgetText(null)).toBeNull();
  });

  it('says what is used and what is left', () => {
    expect(budgetText(tokens(12_345, 100_000))).toBe(
      '12k of 100k tokens used · 88k left'
    );
  });

  it('says when the day is spent', () => {
    expect(budgetText(tokens(100_200, 100_000))).toBe(
      'all 100k tokens used · new turns wait until 00:00 UTC'
    );
  });
});

describe('BudgetLine', () => {
  let widget: ReactWidget | null = null;

  afterEach(() => {
    widget?.dispose();
    widget = null;
  });

  async function shown(answer: ITokenBudget): Promise<HTMLElement> {
    const budget = new ServerFigures<IServerStatus>(async () => ({
      tokens: answer
    }));
    await budget.refresh();
    widget = ReactWidget.create(<BudgetLine budget={budget} session={null} />);
    Widget.attach(widget, document.body);
    await widget.renderPromise;
    return widget.node;
  }

  it('shows the day at the foot of the panel when capped', async () => {
    const node = await shown(tokens(2_500, 50_000));
    expect(node.textContent).toBe('Today: 2.5k of 50k tokens used · 48k left');
  });

  it('stays hidden without a cap', async () => {
    const node = await shown(tokens(2_500, null));
    expect(node.textContent).toBe('');
  });
});
