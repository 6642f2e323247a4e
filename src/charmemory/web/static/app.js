// charmemory's web UI: the few behaviours htmx does not cover.
// Streamed replies (server-sent events over a POST), live regions, drag and drop
// imports and keyboard shortcuts. Text from the server's streams is only ever set
// as textContent; HTML comes only from this server's own templates.
(function () {
  "use strict";

  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
  const headers = () => ({ "X-CSRF-Token": csrf(), "HX-Request": "true" });

  // -- notices -----------------------------------------------------------------------

  function showNotice(text, level) {
    const toast = document.getElementById("toast");
    const box = document.createElement("div");
    box.className = "notice " + (level || "info");
    box.setAttribute("role", level === "error" ? "alert" : "status");
    const span = document.createElement("span");
    span.textContent = text;
    const close = document.createElement("button");
    close.type = "button";
    close.className = "link dismiss";
    close.setAttribute("data-dismiss", "");
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    box.append(span, close);
    toast.replaceChildren(box);
  }

  function showHtmlNotice(html) {
    const toast = document.getElementById("toast");
    toast.innerHTML = html; // this server's own notice fragment
    htmx.process(toast);
  }

  // A notice without a choice to make goes away by itself.
  const NOTICE_MS = 8000;
  const notices = document.getElementById("toast");
  new MutationObserver(() => {
    for (const box of notices.querySelectorAll(".notice.info:not([data-timed])")) {
      box.dataset.timed = "1";
      const wait = box.querySelector("button:not([data-dismiss])") ? 2 * NOTICE_MS : NOTICE_MS;
      setTimeout(() => box.remove(), wait);
    }
  }).observe(notices, { childList: true, subtree: true });

  document.addEventListener("click", (event) => {
    const dismiss = event.target.closest("[data-dismiss]");
    if (dismiss) dismiss.closest(".notice").remove();
    const clear = event.target.closest("[data-clear]");
    if (clear) document.querySelector(clear.dataset.clear).replaceChildren();
  });

  // -- server-sent events read from a fetch response ------------------------------------

  async function* readEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        const data = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) yield { event, data: data.join("\n") };
      }
    }
  }

  function errorText(data) {
    try {
      return JSON.parse(data).error.message;
    } catch (e) {
      return String(data);
    }
  }

  // -- live regions: an element with data-live follows an event stream ------------------

  function connectLive(root) {
    root.querySelectorAll("[data-live]").forEach((element) => {
      if (element.liveSource) return;
      const source = new EventSource(element.dataset.live);
      element.liveSource = source;
      source.addEventListener("html", (event) => {
        element.innerHTML = event.data;
        htmx.process(element);
      });
      source.addEventListener("append", (event) => {
        element.insertAdjacentHTML("afterbegin", event.data);
        htmx.process(element);
      });
    });
  }

  document.addEventListener("htmx:beforeCleanupElement", (event) => {
    const source = event.target.liveSource;
    if (source) source.close();
  });

  // -- the chat: sending, generating, stopping -------------------------------------------

  const chat = { busy: false };

  function pendingMessage(kind, text) {
    const article = document.createElement("article");
    article.className = "message pending " + kind;
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    const body = document.createElement("div");
    body.className = "text";
    body.textContent = text;
    bubble.append(body);
    article.append(bubble);
    document.getElementById("messages").append(article);
    scrollToEnd();
    return body;
  }

  function scrollToEnd() {
    const end = document.getElementById("composer");
    if (end) end.scrollIntoView({ block: "end" });
  }

  function setBusy(form, busy) {
    chat.busy = busy;
    form.querySelector("[data-send]").disabled = busy;
    form.querySelector("[data-stop]").hidden = !busy;
    document.body.classList.toggle("generating", busy);
  }

  async function refreshMessages() {
    const messages = document.getElementById("messages");
    await htmx.ajax("GET", messages.dataset.tail, { target: "#messages", swap: "innerHTML" });
    scrollToEnd();
  }

  async function generate(form, url, fields, userText) {
    if (chat.busy) return;
    setBusy(form, true);
    let ok = true;
    try {
      if (userText) pendingMessage("user", userText);
      const response = await fetch(url, {
        method: "POST",
        headers: headers(),
        body: new URLSearchParams(fields),
      });
      const type = response.headers.get("content-type") || "";
      if (type.startsWith("text/event-stream")) {
        const reply = pendingMessage("char streaming", "…");
        let text = "";
        for await (const event of readEvents(response)) {
          if (event.event === "delta") {
            text += JSON.parse(event.data).text;
            reply.textContent = text;
          } else if (event.event === "error") {
            ok = false;
            showNotice(errorText(event.data), "error");
          }
        }
      } else {
        ok = response.ok;
        showHtmlNotice(await response.text());
      }
    } catch (error) {
      ok = false;
      showNotice("The connection to the server failed: " + error, "error");
    } finally {
      setBusy(form, false);
    }
    await refreshMessages();
    return ok;
  }

  function setupComposer(form) {
    if (form.dataset.ready) return;
    form.dataset.ready = "1";
    const input = form.querySelector("textarea");
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = input.value;
      if (!text.trim() || chat.busy) return;
      input.value = "";
      const command = text.trim().startsWith("/");
      const ok = await generate(form, form.action, { text }, command ? "" : text);
      if (!ok && !input.value) input.value = text;
      input.focus();
    });
    form.querySelector("[data-stop]").addEventListener("click", () => {
      fetch(form.dataset.stopUrl, { method: "POST", headers: headers() });
    });
    document.addEventListener("click", (event) => {
      const button = event.target.closest("[data-generate]");
      if (!button) return;
      generate(form, form.dataset.generateUrl, { kind: button.dataset.generate }, "");
    });
    scrollToEnd();
  }

  // -- forms whose answer is a stream of page pieces (batch extraction) ------------------

  function setupStreamForm(form) {
    if (form.dataset.ready) return;
    form.dataset.ready = "1";
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const target = document.querySelector(form.dataset.streamInto);
      const response = await fetch(form.action, {
        method: "POST",
        headers: headers(),
        body: new URLSearchParams(new FormData(form)),
      });
      if (!(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
        showHtmlNotice(await response.text());
        return;
      }
      for await (const event of readEvents(response)) {
        if (event.event === "html") {
          target.innerHTML = event.data;
          htmx.process(target);
          setup(target); // a form in the piece (catch-up's "who was present?") streams too
        } else if (event.event === "error") {
          showNotice(errorText(event.data), "error");
        }
      }
    });
  }

  // -- importing files by drag and drop, or as soon as they are chosen -------------------

  function setupDropzone(form) {
    if (form.dataset.ready) return;
    form.dataset.ready = "1";
    const input = form.querySelector('input[type="file"]');
    ["dragenter", "dragover"].forEach((name) =>
      form.addEventListener(name, (event) => {
        event.preventDefault();
        form.classList.add("dragging");
      })
    );
    ["dragleave", "drop"].forEach((name) =>
      form.addEventListener(name, () => form.classList.remove("dragging"))
    );
    form.addEventListener("drop", (event) => {
      event.preventDefault();
      if (!event.dataTransfer || !event.dataTransfer.files.length) return;
      input.files = event.dataTransfer.files;
      htmx.trigger(form, "submit");
    });
    input.addEventListener("change", () => {
      if (input.files.length) htmx.trigger(form, "submit");
    });
  }

  // -- keyboard: Escape leaves an edit -----------------------------------------------------

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    const editing = event.target.closest("[data-escape-cancels]");
    if (editing) {
      const cancel = editing.form.querySelector("[data-cancel]");
      if (cancel) cancel.click();
    }
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt;
    if (form.matches && form.matches("form[data-reset-on-success]") && event.detail.successful) {
      form.reset();
    }
  });

  // -- the scene marked for a memory book: the bar says where, the messages follow ---------

  const SCENE_CLASSES = ["scene-start", "scene-end", "scene-only", "scene-inside"];

  function scenePlace(index, start, end) {
    if (index === start && index === end) return "scene-only";
    if (index === start) return "scene-start";
    if (index === end) return "scene-end";
    if (start !== null && end !== null && start < index && index < end) return "scene-inside";
    return "";
  }

  function showScene(bar) {
    const start = bar.dataset.start === "" ? null : Number(bar.dataset.start);
    const end = bar.dataset.end === "" ? null : Number(bar.dataset.end);
    document.querySelectorAll("#messages .message[data-index]").forEach((message) => {
      message.classList.remove(...SCENE_CLASSES);
      const place = scenePlace(Number(message.dataset.index), start, end);
      if (place) message.classList.add(place);
    });
  }

  // Messages the server changed beside what was swapped (hidden by a scene memory) are
  // fetched again where they are shown.
  function refetchChanged(root) {
    root.querySelectorAll("[data-refresh-messages]").forEach((element) => {
      element.dataset.refreshMessages.split(" ").forEach((index) => {
        const target = document.getElementById("m" + index);
        // Each message is its own request's source, so htmx runs them side by side.
        if (!target) return;
        const options = { source: target, target: target, swap: "outerHTML" };
        htmx.ajax("GET", element.dataset.url + index, options);
      });
    });
  }

  // -- the Active Cast drawer: dragged to a side (or moved with the arrow keys) and folded;
  // both remembered as interface settings.

  function saveDrawer(field, value) {
    const body = new URLSearchParams({ [field]: value });
    fetch("/narrator/drawer", { method: "POST", headers: headers(), body: body });
  }

  function putDrawer(drawer, side) {
    drawer.classList.remove("side-left", "side-right");
    drawer.classList.add("side-" + side);
    saveDrawer("position", side);
  }

  document.addEventListener("click", (event) => {
    const toggle = event.target.closest("[data-drawer-toggle]");
    if (!toggle) return;
    const drawer = toggle.closest("[data-cast-drawer]");
    const collapsed = !drawer.classList.contains("collapsed");
    drawer.classList.toggle("collapsed", collapsed);
    drawer.querySelector(".cast-drawer-body").hidden = collapsed;
    toggle.setAttribute("aria-expanded", String(!collapsed));
    saveDrawer("collapsed", String(collapsed));
  });

  document.addEventListener("keydown", (event) => {
    const handle = event.target.closest && event.target.closest("[data-drawer-move]");
    if (!handle || !["ArrowLeft", "ArrowRight"].includes(event.key)) return;
    event.preventDefault();
    putDrawer(handle.closest("[data-cast-drawer]"), event.key === "ArrowLeft" ? "left" : "right");
  });

  document.addEventListener("pointerdown", (event) => {
    const handle = event.target.closest("[data-drawer-move]");
    if (!handle) return;
    const drawer = handle.closest("[data-cast-drawer]");
    const box = drawer.getBoundingClientRect();
    const dx = event.clientX - box.left;
    const dy = event.clientY - box.top;
    handle.setPointerCapture(event.pointerId);
    drawer.classList.add("dragging");
    const move = (e) => {
      drawer.style.left = e.clientX - dx + "px";
      drawer.style.top = e.clientY - dy + "px";
      drawer.style.right = "auto";
    };
    const drop = (e) => {
      handle.removeEventListener("pointermove", move);
      handle.removeEventListener("pointerup", drop);
      drawer.classList.remove("dragging");
      drawer.style.left = drawer.style.top = drawer.style.right = "";
      putDrawer(drawer, e.clientX < window.innerWidth / 2 ? "left" : "right");
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", drop);
  });

  function setup(root) {
    connectLive(root);
    refetchChanged(root);
    const bar = root.matches && root.matches("[data-scene-bar]") ? root : null;
    if (bar) showScene(bar);
    root.querySelectorAll("form[data-stream]").forEach(setupComposer);
    root.querySelectorAll("form[data-stream-into]").forEach(setupStreamForm);
    root.querySelectorAll("[data-dropzone]").forEach(setupDropzone);
    const focus = root.querySelector("[autofocus]");
    if (focus && root !== document) {
      focus.focus();
      // An editor opens with the caret after the text, to add to it or take from its end.
      if (typeof focus.setSelectionRange === "function" && focus.value !== undefined) {
        focus.setSelectionRange(focus.value.length, focus.value.length);
      }
    }
  }

  document.addEventListener("htmx:load", (event) => setup(event.detail.elt));
  document.addEventListener("DOMContentLoaded", () => setup(document));
})();
