import { askerOf } from '../asker';

describe('askerOf', () => {
  it('names an outside client as the request says, capitalised', () => {
    const approval = {
      requested_by: 'an MCP client of ada, calling itself "night-agent"'
    };
    expect(askerOf(approval)).toBe(
      'An MCP client of ada, calling itself "night-agent"'
    );
  });

  it('names the assistant when a turn of the panel asks', () => {
    expect(askerOf({})).toBe('The assistant');
    expect(askerOf({ requested_by: '' })).toBe('The assistant');
  });
});
