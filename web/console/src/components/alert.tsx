/** A refusal or failure said to the person, announced to screen readers; nothing when there is none. */
export function Alert(props: { message: string | undefined }) {
  if (!props.message) return null;
  return (
    <p role="alert" class="bad">
      {props.message}
    </p>
  );
}
