import type { ComponentChildren } from 'preact';

/** A table that scrolls sideways when it must: its column headings (`num` ones right-aligned) and its rows. */
export function DataTable(props: { testId: string; class?: string; columns: (string | { label: string; num: true })[]; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table class={props.class} data-testid={props.testId}>
        <thead>
          <tr>
            {props.columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column}>{column}</th>
              ) : (
                <th key={column.label} class="num">
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
