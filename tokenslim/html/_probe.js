// Which text nodes of the rendered page a reader sees (tokenslim.html._browser runs this in Chromium).
// Returns [[text, reason], ...] per non-blank text node of the composed tree (shadow roots included),
// in document order; reason is "" for visible text, else the first check that failed.
(opts) => {
  const W = window.innerWidth, H = window.innerHeight;
  const MIN_PX = opts.minPx, MIN_FONT = opts.minFontPx, MIN_CONTRAST = opts.minContrast, MAX_ALPHA = opts.maxAlpha;
  const SKIP = new Set(["SCRIPT", "STYLE", "TEMPLATE", "HEAD", "TITLE", "NOSCRIPT"]);
  const REPLACED = new Set(["IMG", "VIDEO", "CANVAS", "IFRAME", "OBJECT", "EMBED", "svg", "PICTURE", "INPUT"]);
  // Scripts never run here, but a reader's browser runs them; a page that hides its body until a script
  // reveals it (body.fadein{opacity:0}) says so in <noscript><style>: those style sheets apply, as in
  // tokenslim's extraction (<noscript> itself stays hidden, as with scripting on).
  for (const ns of document.querySelectorAll("noscript")) {
    for (const m of ns.textContent.matchAll(/<style[^>]*>([\s\S]*?)<\/style/gi)) {
      const st = document.createElement("style");
      st.textContent = m[1];
      document.head.appendChild(st);
    }
  }
  window.scrollTo({ left: 0, top: 0, behavior: "instant" });
  const styles = new Map();
  const cs = (e) => { let s = styles.get(e); if (!s) { s = getComputedStyle(e); styles.set(e, s); } return s; };
  // The composed-tree parent: a slotted element's slot, a shadow root's host, else the parent element.
  const up = (e) => e.assignedSlot || e.parentElement || (e.parentNode && e.parentNode.host) || null;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const colors = new Map();
  // Any CSS colour the browser computed (rgb(), color(srgb ...), oklch()...) as [r, g, b, a] in 0..1.
  const rgba = (s) => {
    let c = colors.get(s);
    if (c) return c;
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = "#000";
    ctx.fillStyle = s;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    const a = d[3] / 255;
    c = a ? [d[0] / 255 / a, d[1] / 255 / a, d[2] / 255 / a, a] : [0, 0, 0, 0];
    colors.set(s, c);
    return c;
  };
  const lum = (c) => {
    const f = (x) => (x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4));
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (fg, bg) => [0, 1, 2].map((i) => fg[i] * fg[3] + bg[i] * (1 - fg[3]));
  // The colour functions of an element's and its ancestors' filter (innermost first): they recolour
  // everything painted inside, text and backgrounds alike, in sRGB (the Filter Effects formulas).
  const tints = new Map();
  const tintOf = (e) => {
    if (!e) return [];
    let got = tints.get(e);
    if (got) return got;
    const own = [];
    const f = cs(e).filter;
    if (f && f !== "none") {
      for (const m of f.matchAll(/(invert|brightness|contrast|grayscale|sepia|saturate|hue-rotate)\(([^()]*)\)/g)) {
        const v = m[2].trim();
        const n = v === "" ? (m[1] === "hue-rotate" ? 0 : 1) : parseFloat(v) / (v.endsWith("%") ? 100 : 1) *
          (v.endsWith("rad") && !v.endsWith("grad") ? 180 / Math.PI : v.endsWith("turn") ? 360 : v.endsWith("grad") ? 0.9 : 1);
        own.push([m[1], n]);
      }
    }
    const outer = tintOf(up(e));
    const mode = cs(e).mixBlendMode;
    if (BLENDS.has(mode) && !outer.length && !["absolute", "fixed"].includes(cs(e).position)) {
      const d = backdropOf(e);  // an absolute or fixed box is drawn elsewhere, over a backdrop not read here
      if (d) own.push([mode, d]);
    }
    got = own.concat(outer);
    tints.set(e, got);
    return got;
  };
  // mix-blend-mode: what the element's stacking context painted below it, from its ancestors' backgrounds
  // (opaque, or null: nothing painted there, since a stacking context is a group that starts empty and the
  // browser's default white canvas is not part of it), and the blend formulas (Compositing and Blending 1).
  const BLENDS = new Set(["multiply", "screen", "overlay", "darken", "lighten", "color-dodge", "color-burn",
    "hard-light", "soft-light", "difference", "exclusion", "hue", "saturation", "color", "luminosity"]);
  const isolates = (s) => s.isolation === "isolate" || parseFloat(s.opacity) < 1 || s.transform !== "none" ||
    s.filter !== "none" || s.perspective !== "none" || s.mixBlendMode !== "normal" || s.clipPath !== "none" ||
    (s.maskImage || s.webkitMaskImage || "none") !== "none" || ["fixed", "sticky"].includes(s.position) ||
    (s.position !== "static" && s.zIndex !== "auto") || /paint|layout|strict|content/.test(s.contain || "");
  const backdropOf = (e) => {
    const layers = [];
    for (let a = up(e); a; a = up(a)) {
      const s = cs(a);
      if (s.backgroundImage !== "none") return null;
      const c = rgba(s.backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1 || isolates(s)) break;
    }
    if (!layers.length || layers[layers.length - 1][3] < 1) return null;
    let bg = layers[layers.length - 1].slice(0, 3);
    for (let i = layers.length - 2; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const channel = (mode, b, s) => {
    switch (mode) {
      case "multiply": return b * s;
      case "screen": return b + s - b * s;
      case "overlay": return channel("hard-light", s, b);
      case "darken": return Math.min(b, s);
      case "lighten": return Math.max(b, s);
      case "color-dodge": return b === 0 ? 0 : s >= 1 ? 1 : Math.min(1, b / (1 - s));
      case "color-burn": return b >= 1 ? 1 : s <= 0 ? 0 : 1 - Math.min(1, (1 - b) / s);
      case "hard-light": return s <= 0.5 ? b * 2 * s : channel("screen", b, 2 * s - 1);
      case "soft-light": {
        if (s <= 0.5) return b - (1 - 2 * s) * b * (1 - b);
        const d = b <= 0.25 ? ((16 * b - 12) * b + 4) * b : Math.sqrt(b);
        return b + (2 * s - 1) * (d - b);
      }
      case "difference": return Math.abs(b - s);
      default: return b + s - 2 * b * s;  // exclusion
    }
  };
  const lumOf = (c) => 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2];
  const setLum = (c, l) => {
    const d = l - lumOf(c);
    let x = c.map((v) => v + d);
    const lo = lumOf(x), n = Math.min(...x), m = Math.max(...x);
    if (n < 0) x = x.map((v) => lo + (v - lo) * lo / (lo - n));
    if (m > 1) x = x.map((v) => lo + (v - lo) * (1 - lo) / (m - lo));
    return x;
  };
  const setSat = (c, sat) => {
    const lo = Math.min(...c), hi = Math.max(...c);
    return hi === lo ? [0, 0, 0] : c.map((v) => (v - lo) * sat / (hi - lo));
  };
  const blendOf = (mode, b, s) => {
    const sat = (c) => Math.max(...c) - Math.min(...c);
    if (mode === "hue") return setLum(setSat(s, sat(b)), lumOf(b));
    if (mode === "saturation") return setLum(setSat(b, sat(s)), lumOf(b));
    if (mode === "color") return setLum(s, lumOf(b));
    if (mode === "luminosity") return setLum(b, lumOf(s));
    return [0, 1, 2].map((i) => channel(mode, b[i], s[i]));
  };
  const clamp = (x) => Math.min(1, Math.max(0, x));
  const matrix = (name, n) => {
    if (name === "hue-rotate") {
      const c = Math.cos(n * Math.PI / 180), s = Math.sin(n * Math.PI / 180);
      return [[0.213 + c * 0.787 - s * 0.213, 0.715 - c * 0.715 - s * 0.715, 0.072 - c * 0.072 + s * 0.928],
              [0.213 - c * 0.213 + s * 0.143, 0.715 + c * 0.285 + s * 0.140, 0.072 - c * 0.072 - s * 0.283],
              [0.213 - c * 0.213 - s * 0.787, 0.715 - c * 0.715 + s * 0.715, 0.072 + c * 0.928 + s * 0.072]];
    }
    if (name === "saturate") {
      const v = Math.max(0, n);
      return [[0.213 + 0.787 * v, 0.715 - 0.715 * v, 0.072 - 0.072 * v],
              [0.213 - 0.213 * v, 0.715 + 0.285 * v, 0.072 - 0.072 * v],
              [0.213 - 0.213 * v, 0.715 - 0.715 * v, 0.072 + 0.928 * v]];
    }
    const k = 1 - clamp(n);
    if (name === "grayscale") {
      return [[0.2126 + 0.7874 * k, 0.7152 - 0.7152 * k, 0.0722 - 0.0722 * k],
              [0.2126 - 0.2126 * k, 0.7152 + 0.2848 * k, 0.0722 - 0.0722 * k],
              [0.2126 - 0.2126 * k, 0.7152 - 0.7152 * k, 0.0722 + 0.9278 * k]];
    }
    return [[0.393 + 0.607 * k, 0.769 - 0.769 * k, 0.189 - 0.189 * k],
            [0.349 - 0.349 * k, 0.686 + 0.314 * k, 0.168 - 0.168 * k],
            [0.272 - 0.272 * k, 0.534 - 0.534 * k, 0.131 + 0.869 * k]];
  };
  const tinted = (c, tint) => {
    let [r, g, b] = c;
    for (const [name, n] of tint) {
      if (name === "invert") { const a = clamp(n); [r, g, b] = [r, g, b].map((x) => a + x * (1 - 2 * a)); }
      else if (name === "brightness") [r, g, b] = [r, g, b].map((x) => x * Math.max(0, n));
      else if (name === "contrast") [r, g, b] = [r, g, b].map((x) => (x - 0.5) * Math.max(0, n) + 0.5);
      else if (BLENDS.has(name)) [r, g, b] = blendOf(name, n, [r, g, b]);
      else { const m = matrix(name, n); [r, g, b] = m.map((row) => row[0] * r + row[1] * g + row[2] * b); }
      [r, g, b] = [r, g, b].map(clamp);
    }
    return [r, g, b, c[3]];
  };
  const filterOpacity = (f) => {
    let o = 1;
    if (f && f !== "none") for (const m of f.matchAll(/opacity\(([\d.eE+-]+)(%?)\)/g)) o *= parseFloat(m[1]) / (m[2] ? 100 : 1);
    return o;
  };
  const root = document.documentElement;
  const viewportStyle = cs(root).overflowX === "visible" && document.body ? cs(document.body) : cs(root);
  const scroller = document.scrollingElement || root;  // <body> in quirks mode
  const docW = ["hidden", "clip"].includes(viewportStyle.overflowX) ? W : Math.max(W, scroller.scrollWidth);
  const docH = ["hidden", "clip"].includes(viewportStyle.overflowY) ? H : Math.max(H, scroller.scrollHeight);

  // A transform (or its kin) on an ancestor makes that ancestor the containing block of fixed descendants:
  // they are placed against it and scroll with it, as absolute boxes do, not fixed to the viewport. Transforms
  // skip a non-replaced inline box; a filter does not.
  const containsFixed = (e) => {
    for (let a = up(e); a; a = up(a)) {
      const s = cs(a);
      if (s.filter !== "none" || (s.backdropFilter && s.backdropFilter !== "none") || /filter/.test(s.willChange)) return true;
      if (s.display === "inline") continue;
      if (s.transform !== "none" || s.translate !== "none" || s.rotate !== "none" || s.scale !== "none" ||
          s.perspective !== "none" || /layout|paint|strict|content/.test(s.contain) ||
          (s.containerType && s.containerType !== "normal") ||
          /transform|perspective|translate|rotate|scale/.test(s.willChange)) return true;
    }
    return false;
  };

  // Per element: why its text is hidden before geometry ("" if not), the clip box (page coordinates)
  // from overflow:hidden/clip ancestors, and whether it sits in a fixed box (bounded by the viewport).
  const info = new Map();
  // Nothing draws the glyphs: fill, stroke and every other glyph colour (sharp shadow, clipped background) transparent.
  const inkless = (s, glyphs) => {
    const fill = rgba(s.webkitTextFillColor || s.color);
    const stroke = parseFloat(s.webkitTextStrokeWidth) > 0 ? rgba(s.webkitTextStrokeColor) : [0, 0, 0, 0];
    return fill[3] <= MAX_ALPHA && stroke[3] <= MAX_ALPHA && glyphs.every((c) => c[3] <= MAX_ALPHA);
  };
  const elementInfo = (el) => {
    let got = info.get(el);
    if (got) return got;
    const s = cs(el);
    // A display:contents element has no box of its own (checkVisibility is false, hit-testing skips it):
    // its text is laid out in the nearest ancestor box.
    let box = el;
    while (box && cs(box).display === "contents") box = up(box);
    let reason = "";
    if (!box || !box.checkVisibility({ opacityProperty: true, visibilityProperty: true })) reason = "checkVisibility";
    else if (s.visibility !== "visible") reason = "checkVisibility";
    let opacity = 1, fixed = false, escaped = false, scroller = false, clipped = false;
    let clip = [-Infinity, -Infinity, Infinity, Infinity];
    for (let e = el; e; e = up(e)) {
      const es = cs(e);
      opacity *= parseFloat(es.opacity) * filterOpacity(es.filter);
      if (es.clipPath !== "none" || (es.clip && es.clip !== "auto")) clipped = true;
      // content-visibility:hidden skips an element's own content (checkVisibility only looks at ancestors);
      // it needs layout containment, which a non-replaced inline box does not take
      if (es.contentVisibility === "hidden" && es.display !== "inline" && !reason) reason = "checkVisibility";
      if (!reason && masked(es)) reason = "masked";
      if (!reason && es.display !== "inline" && degenerate(es)) reason = "geometry";
      // moved by translateZ() to or past the parent's perspective distance: behind the viewer, not drawn
      const parent = up(e);
      if (!reason && parent && es.transform !== "none" && es.display !== "inline" && cs(parent).perspective !== "none" &&
          new DOMMatrix(es.transform).m43 >= parseFloat(cs(parent).perspective)) reason = "geometry";
      // a back face not drawn hides the element and what is flattened into its plane (not a preserve-3d
      // ancestor's children, which keep their own planes)
      if (!reason && es.backfaceVisibility === "hidden" && es.display !== "inline" &&
          (e === el || es.transformStyle !== "preserve-3d") && facesAway(e)) reason = "backface";
      const pos = es.position;
      if (!escaped && !fixed) {
        // paint containment clips like overflow:hidden
        const clips = ["hidden", "clip"].includes(es.overflowX) || ["hidden", "clip"].includes(es.overflowY) ||
          /paint|strict|content/.test(es.contain);
        if (["auto", "scroll"].includes(es.overflowX) || ["auto", "scroll"].includes(es.overflowY)) {
          if (e !== root && e !== document.body) scroller = true;
        } else if (clips && e !== root && e !== document.body) {
          const r = e.getBoundingClientRect();
          clip = [Math.max(clip[0], r.left + scrollX), Math.max(clip[1], r.top + scrollY),
                  Math.min(clip[2], r.right + scrollX), Math.min(clip[3], r.bottom + scrollY)];
        }
      }
      if (escaped && pos !== "static") escaped = false;
      if (pos === "fixed" && !containsFixed(e)) fixed = true;
      else if (pos === "absolute" || pos === "fixed") escaped = true;
    }
    if (!reason && opacity <= MAX_ALPHA) reason = "opacity";
    // font-size-adjust scales the used size by its number over the font's x-height ratio (taken as 0.5)
    const adjust = /^(ex-height )?[\d.]+$/.test(s.fontSizeAdjust) ? parseFloat(s.fontSizeAdjust.replace("ex-height ", "")) : NaN;
    if (!reason && parseFloat(s.fontSize) * (isNaN(adjust) ? 1 : adjust / 0.5) < MIN_FONT) reason = "font_size";
    // -webkit-text-security draws every character as a disc, as in a password field
    if (!reason && s.webkitTextSecurity && s.webkitTextSecurity !== "none") reason = "text_security";
    // What else draws the glyphs: a sharp text-shadow, a background clipped to the text (here or on an ancestor).
    const glyphs = [];
    const shadow = sharpShadow(s);
    if (shadow) glyphs.push(rgba(shadow));
    let clipImage = false;
    for (let e = el; e; e = up(e)) {
      const es = cs(e);
      if (clipsText(es)) {
        if (es.backgroundImage !== "none") clipImage = true;
        else glyphs.push(rgba(es.backgroundColor));
        break;
      }
    }
    if (!reason && !clipImage && inkless(s, glyphs)) reason = "transparent";
    got = { reason, fixed, clip, scroller, clipped, style: s, box, glyphs, clipImage };
    info.set(el, got);
    return got;
  };
  // The colour stops of a computed gradient (rgb(), color(), oklch()... or transparent).
  const colourStops = (img) => img.match(/(rgba?|color|hsla?|oklch|oklab|lab|lch)\([^()]*\)|transparent/g) || [];
  // A gradient whose every colour stop is opaque (a fade to transparent lets the text through).
  const solidGradient = (img) => {
    const stops = colourStops(img);
    return stops.length > 0 && stops.every((c) => c !== "transparent" && rgba(c)[3] >= 0.9);
  };
  // Split a computed list value at its top-level commas (the commas inside rgba(...) stay).
  const layers = (v) => {
    const parts = [];
    let depth = 0, start = 0;
    for (let i = 0; i < v.length; i++) {
      if (v[i] === "(") depth++;
      else if (v[i] === ")") depth--;
      else if (v[i] === "," && !depth) { parts.push(v.slice(start, i)); start = i + 1; }
    }
    parts.push(v.slice(start));
    return parts.map((p) => p.trim());
  };
  // A mask that lets nothing through: every layer a gradient of transparent stops, or a tile of no size.
  const masked = (es) => {
    const img = es.maskImage && es.maskImage !== "none" ? es.maskImage : es.webkitMaskImage;
    if (!img || img === "none") return false;
    const sizes = layers(es.maskSize || es.webkitMaskSize || "auto");
    return layers(img).every((l, i) => {
      if (/(^|\s)0(px|%)?(\s|$)/.test(sizes[i % sizes.length])) return true;
      if (!/gradient\(/.test(l)) return false;
      const stops = colourStops(l);
      return stops.length > 0 && stops.every((c) => c === "transparent" || rgba(c)[3] <= MAX_ALPHA);
    });
  };
  // The colour of the first text-shadow layer sharp enough to draw the glyphs (blur at most a quarter of the
  // font size), or null.
  const sharpShadow = (s) => {
    if (!s.textShadow || s.textShadow === "none") return null;
    for (const l of layers(s.textShadow)) {
      const colour = (l.match(/[a-z-]+\([^()]*\)|transparent/) || [null])[0];
      const px = (l.replace(colour || "", "").match(/-?[\d.]+(e[+-]?\d+)?px/g) || []).map(parseFloat);
      if (colour && px.length >= 2 && (px[2] || 0) <= parseFloat(s.fontSize) / 4) return colour;
    }
    return null;
  };
  // A 2D transform with an infinite shear (skew(90deg)) is not drawn.
  const degenerate = (s) => {
    const m = /^matrix\(([^)]*)\)/.exec(s.transform);
    if (m && m[1].split(",").slice(0, 4).some((x) => !isFinite(parseFloat(x)) || Math.abs(parseFloat(x)) >= 1e12)) return true;
    // a singular 3D transform (scaleZ(0), a matrix3d with no depth, the scale property's z at 0) is not drawn
    const m3 = /^matrix3d\(([^)]*)\)/.exec(s.transform);
    if (m3) {
      const v = m3[1].split(",").map(parseFloat);
      if (Math.abs(v[0] * (v[5] * v[10] - v[9] * v[6]) - v[4] * (v[1] * v[10] - v[9] * v[2]) + v[8] * (v[1] * v[6] - v[5] * v[2])) < 1e-9) return true;
    }
    const scale = (s.scale || "none").trim().split(/\s+/);
    return scale.length === 3 && parseFloat(scale[2]) === 0;
  };
  // backface-visibility: the element's plane, turned by its transforms (the rotate and scale properties, then
  // transform) and by those of the preserve-3d ancestors whose 3D context it joins, shows its back when the
  // inverse's m33 is negative (how Chromium decides it).
  const matrixOf = (e) => {
    const s = cs(e);
    let m = new DOMMatrix();
    if (s.rotate && s.rotate !== "none") {
      const parts = s.rotate.trim().split(/\s+/);
      const a = parts[parts.length - 1];
      const deg = parseFloat(a) * (a.endsWith("turn") ? 360 : a.endsWith("grad") ? 0.9 : a.endsWith("rad") ? 180 / Math.PI : 1);
      const axis = parts.length === 4 ? parts.slice(0, 3).map(parseFloat)
        : ({ x: [1, 0, 0], y: [0, 1, 0], z: [0, 0, 1] })[parts.length === 2 ? parts[0] : "z"];
      if (axis) m = m.rotateAxisAngle(axis[0], axis[1], axis[2], deg);
    }
    if (s.scale && s.scale !== "none") {
      const v = s.scale.trim().split(/\s+/).map(parseFloat);
      m = m.scale(v[0], v.length > 1 ? v[1] : v[0], v.length > 2 ? v[2] : 1);
    }
    if (s.transform && s.transform !== "none") m = m.multiply(new DOMMatrix(s.transform));
    return m;
  };
  const facesAway = (e) => {
    let m = matrixOf(e);
    for (let p = up(e); p && cs(p).transformStyle === "preserve-3d"; p = up(p)) m = matrixOf(p).multiply(m);
    return m.inverse().m33 < 0;
  };
  const inside = (a, b) => b === a || a.contains(b) || (b.getRootNode() !== a.getRootNode() && a.contains(b.getRootNode().host));
  // Is this element painted opaque over what lies below (an opaque background, an image, a replaced element)?
  const clipsText = (s) => s.webkitBackgroundClip === "text" || s.backgroundClip === "text";
  const opaque = (e) => {
    // the root's background paints the canvas, under everything; so does the body's when the root has none
    if (e === document.documentElement) return false;
    if (e === document.body) {
      const r = cs(document.documentElement);
      if (r.backgroundImage === "none" && rgba(r.backgroundColor)[3] === 0) return false;
    }
    const s = cs(e);
    if (clipsText(s) && !REPLACED.has(e.tagName)) return false;
    if (REPLACED.has(e.tagName) || s.backgroundImage.includes("url(")) return true;
    if (s.backgroundImage !== "none" && !solidGradient(s.backgroundImage)) return false;
    return s.backgroundImage !== "none" || rgba(s.backgroundColor)[3] >= 0.9;
  };
  // The colour of a top background layer that paints one opaque colour over the whole box (a gradient
  // whose stops are all that colour, at the default size), hiding the layers below it; else null.
  const solidTop = (es) => {
    const top = layers(es.backgroundImage)[0].trim();
    if (!/gradient\(/.test(top) || /url\(|image-set\(/.test(top)) return null;
    const stops = colourStops(top).map((c) => (c === "transparent" ? [0, 0, 0, 0] : rgba(c)));
    if (!stops.length || stops.some((c) => c[3] < 1 || c.some((v, i) => v !== stops[0][i]))) return null;
    const size = layers(es.backgroundSize)[0].trim();
    return ["auto", "auto auto", "cover", "100%", "100% 100%", "100% auto", "auto 100%"].includes(size) ? stops[0] : null;
  };
  // ::first-line: a text node laid out on the first formatted line of a block (every line box of it
  // within that line's first box) is drawn with the pseudo-element's font and colours, and on its
  // background. An inline element between the block and the text inherits them where its own computed
  // value is the block's (it sets none of its own). The innermost such block decides.
  const lineRange = document.createRange();
  const firstLines = new Map();
  const firstLineOf = (a) => {
    if (firstLines.has(a)) return firstLines.get(a);
    let got = null;
    const as = cs(a), fl = getComputedStyle(a, "::first-line");
    if (fl.color !== as.color || fl.webkitTextFillColor !== as.webkitTextFillColor || fl.fontSize !== as.fontSize ||
        fl.backgroundColor !== "rgba(0, 0, 0, 0)" || fl.webkitTextStrokeWidth !== as.webkitTextStrokeWidth) {
      const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t && !got; t = walker.nextNode()) {
        if (!t.data.trim()) continue;
        lineRange.selectNodeContents(t);
        const r = lineRange.getClientRects()[0];
        if (r) got = { fl, top: r.top + scrollY, bottom: r.bottom + scrollY };
      }
    }
    firstLines.set(a, got);
    return got;
  };
  const lineStyle = (el, s, boxes) => {
    for (let a = el; a && a !== root; a = up(a)) {
      const display = cs(a).display;
      if (display === "inline" || display === "contents") continue;
      const line = firstLineOf(a);
      if (!line || !boxes.every(([, t, , b]) => (t + b) / 2 >= line.top - 1 && (t + b) / 2 <= line.bottom + 1)) continue;
      const fl = line.fl, as = cs(a);
      const pick = (p) => (el === a || s[p] === as[p] ? fl[p] : s[p]);
      return { color: pick("color"), webkitTextFillColor: pick("webkitTextFillColor"), fontSize: pick("fontSize"),
               webkitTextStrokeWidth: pick("webkitTextStrokeWidth"), webkitTextStrokeColor: pick("webkitTextStrokeColor"),
               pointerEvents: s.pointerEvents, lineBg: rgba(fl.backgroundColor),
               shadow: el === a || s.textShadow === as.textShadow ? sharpShadow(fl) : null };
    }
    return null;
  };
  // The text colour against what is painted below it at a point; null when an image is below (unknown).
  const contrastAt = (el, s, stack, idx, glyphs, clipImage) => {
    if (clipImage) return null;
    const layers = [];
    if (s.lineBg && s.lineBg[3] > 0) layers.push(tinted(s.lineBg, tintOf(el)));
    for (let i = idx; i < stack.length; i++) {
      const e = stack[i], es = cs(e);
      const solid = es.backgroundImage !== "none" ? solidTop(es) : null;
      if ((i > idx && REPLACED.has(e.tagName)) || (es.backgroundImage !== "none" && !solid)) return null;
      // clipped to the glyphs: not behind them
      const c = clipsText(es) ? [0, 0, 0, 0] : tinted(solid || rgba(es.backgroundColor), tintOf(e));
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = CANVAS;
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    const tint = tintOf(el);
    const fill = tinted(rgba(s.webkitTextFillColor || s.color), tint);
    let best = contrast(over(fill, bg), bg);
    if (parseFloat(s.webkitTextStrokeWidth) > 0) {
      const stroke = tinted(rgba(s.webkitTextStrokeColor), tint);
      best = Math.max(best, contrast(over(stroke, bg), bg));
    }
    for (const c of glyphs) best = Math.max(best, contrast(over(tinted(c, tint), bg), bg));
    return best;
  };

  // The canvas below everything: white, or dark where the root uses the dark colour scheme (color-scheme, or
  // <meta name="color-scheme">): the Canvas system colour as the root's scheme resolves it.
  const CANVAS = (() => {
    const probe = document.createElement("div");
    probe.style.cssText = "display: none; background-color: Canvas";
    document.documentElement.appendChild(probe);
    const c = rgba(getComputedStyle(probe).backgroundColor);
    probe.remove();
    return c[3] >= 1 ? c.slice(0, 3) : [1, 1, 1];
  })();
  const out = [];
  const range = document.createRange();
  const visit = (node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.data;
      if (!text.trim()) return;
      const el = node.parentElement;
      if (!el) return;
      out.push([node, el]);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return;
    if (node.nodeType === Node.ELEMENT_NODE && SKIP.has(node.tagName)) return;
    if (node.shadowRoot) visit(node.shadowRoot);
    for (let c = node.firstChild; c; c = c.nextSibling) visit(c);
  };
  if (document.body) visit(document.body);

  // Geometry at scroll (0, 0): text rects inside the document (or the viewport for fixed boxes) and clips.
  const pending = [];
  const results = out.map(([node, el]) => {
    const e = elementInfo(el);
    if (e.reason) return [node.data, e.reason];
    // a closed <details> renders its <summary> only: its own text outside one is not laid out (for the text
    // inside its other children, checkVisibility says so)
    if (el.tagName === "DETAILS" && !el.open) return [node.data, "checkVisibility"];
    range.selectNodeContents(node);
    const boxes = [];
    for (const r of range.getClientRects()) {
      let [l, t, rr, b] = [r.left, r.top, r.right, r.bottom];
      if (!e.fixed) { l += scrollX; t += scrollY; rr += scrollX; b += scrollY; }
      const area = e.fixed ? [0, 0, W, H] : [0, 0, docW, docH];
      const c = e.fixed ? area : [Math.max(area[0], e.clip[0]), Math.max(area[1], e.clip[1]),
                                  Math.min(area[2], e.clip[2]), Math.min(area[3], e.clip[3])];
      l = Math.max(l, c[0]); t = Math.max(t, c[1]); rr = Math.min(rr, c[2]); b = Math.min(b, c[3]);
      if (rr - l >= MIN_PX && b - t >= MIN_PX) boxes.push([l, t, rr, b]);
    }
    if (!boxes.length) return [node.data, "geometry"];
    // on a block's first line, the text is drawn as ::first-line styles it
    const line = lineStyle(el, e.style, boxes);
    const drawn = line ? { ...e, style: line, glyphs: line.shadow ? [...e.glyphs, rgba(line.shadow)] : e.glyphs } : e;
    if (line && parseFloat(line.fontSize) < MIN_FONT) return [node.data, "font_size"];
    if (line && !e.clipImage && inkless(line, drawn.glyphs)) return [node.data, "transparent"];
    const res = [node.data, ""];
    pending.push([res, el, drawn, boxes]);
    return res;
  });

  // Paint: at five points along each of up to three line rects per node (the centre first, then 10%, 90%,
  // 30% and 70% of its width), is the element on top (not covered by an opaque box, not clipped away by
  // clip/clip-path) and does its colour stand out from what is painted below it? One such point is enough:
  // a line that a box covers only in part is seen in part.
  const paint = ([res, el, e, boxes]) => {
    const picks = boxes.length <= 3 ? boxes : [boxes[0], boxes[boxes.length >> 1], boxes[boxes.length - 1]];
    let reason = "";
    const points = [];
    for (const [l, t, rr, b] of picks) for (const f of [0.5, 0.1, 0.9, 0.3, 0.7]) points.push([l + (rr - l) * f, (t + b) / 2]);
    for (let [x, y] of points) {
      if (!e.fixed) {
        window.scrollTo({ left: Math.max(0, x - W / 2), top: Math.max(0, y - H / 2), behavior: "instant" });  // "instant": a page's scroll-behavior:smooth would make the scroll asynchronous
        x -= scrollX; y -= scrollY;
      }
      if (x < 0 || y < 0 || x >= W || y >= H) { reason = ""; break; }  // cannot be scrolled to: geometry decided
      const rootNode = el.getRootNode();
      const stack = (rootNode.elementsFromPoint ? rootNode : document).elementsFromPoint(x, y);
      let idx = stack.indexOf(e.box);
      if (idx < 0) {
        if (e.style.pointerEvents === "none" || e.scroller) { reason = ""; break; }
        // Text overflowing its box (height:0 with overflow visible) is drawn but not hit: then the
        // nearest ancestor box under the point stands in, unless clip or clip-path cut the text away.
        if (e.clipped) { reason = "not_painted"; continue; }
        idx = stack.findIndex((c) => c.contains(e.box) || inside(c, e.box));
        if (idx < 0) { reason = "not_painted"; continue; }
      }
      const cover = stack.slice(0, idx).find((c) => !inside(e.box, c) && opaque(c));
      if (cover) { reason = "covered"; continue; }
      const k = contrastAt(e.box, e.style, stack, idx, e.glyphs, e.clipImage);
      if (k !== null && k < MIN_CONTRAST) { reason = "contrast"; continue; }
      reason = "";
      break;
    }
    return reason;
  };
  for (const entry of pending) entry[0][1] = paint(entry);
  // A box that covered text at one scroll position may be gone at the next (layout still settling
  // while the probe scrolls): text is "covered" only when a second look, after every other, agrees.
  for (const entry of pending) if (entry[0][1] === "covered") entry[0][1] = paint(entry);
  window.scrollTo({ left: 0, top: 0, behavior: "instant" });
  if (!opts.serialize) return results;
  // Exact mode: the page as tokenslim's extractor should read it. Hidden text nodes go; what decided
  // visibility goes too (style sheets, style attributes, the hidden and popover attributes), so that
  // the extractor's own rules, reading markup only, find nothing more to hide.
  let hiddenChars = 0;
  out.forEach(([node], i) => { if (results[i][1]) { hiddenChars += node.data.length; node.remove(); } });
  for (const e of document.querySelectorAll("style, link[rel~=stylesheet i]")) e.remove();
  const roots = [];
  const strip = (n) => {
    if (n.nodeType === Node.ELEMENT_NODE) {
      for (const a of ["style", "hidden", "popover", "bgcolor", "color"]) n.removeAttribute(a);
      if (n.tagName === "BODY") n.removeAttribute("text");
      if (n.tagName === "DIALOG") n.setAttribute("open", "");
      if (n.shadowRoot) { roots.push(n.shadowRoot); strip(n.shadowRoot); }
    }
    for (let c = n.firstChild; c; c = c.nextSibling) strip(c);
  };
  strip(document.documentElement);
  for (const r of roots) for (const e of r.querySelectorAll("style, link")) e.remove();
  return { hiddenChars, hiddenNodes: results.filter((r) => r[1]).length,
           html: document.documentElement.getHTML({ shadowRoots: roots }) };
}
