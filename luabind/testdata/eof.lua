function chat(vu)
  if true then
