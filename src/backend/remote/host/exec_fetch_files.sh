for f do
  if [ -f "$f" ] && [ -r "$f" ]; then printf 1; base64 -w0 < "$f"; printf '\0'; else printf '0\0'; fi
done
