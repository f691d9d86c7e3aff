package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium returns the headless browser the rendering test runs:
// $TCAST_CHROMIUM (.ci/run installs Debian's chromium and sets it to
// /usr/bin/chromium).
func chromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("TCAST_CHROMIUM")
	if bin == "" {
		t.Skip("optional tool missing: set TCAST_CHROMIUM to a Chromium binary; " +
			".ci/run installs it with `apt-get install chromium` and sets TCAST_CHROMIUM=/usr/bin/chromium")
	}
	return bin
}

const shotWidth = 1100

// runChromium runs headless Chromium on the page at path with the extra
// arguments and returns its standard output and error.
func runChromium(t *testing.T, bin, path string, height int, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir=" + t.TempDir(),
		"--window-size=" + strconv.Itoa(shotWidth) + "," + strconv.Itoa(height)}, args...)
	all = append(all, "file://"+path)
	cmd := exec.CommandContext(ctx, bin, all...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "%s %s: %s", bin, strings.Join(all, " "), errb.String())
	return out.String(), errb.String()
}

// consoleRE matches a message of the page's console in Chromium's log.
var consoleRE = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// box is an SVG element's place on the page, in CSS pixels.
type box struct {
	ID           string
	X, Y, W, H   float64
	PageH, PageW float64
}

// TestChromium renders the golden page in headless Chromium: no console
// message (an SVG attribute Chromium cannot parse is one), and every plot
// drawn: inside each SVG's box on the screenshot, pixels other than its
// background, and for the charts pixels of the recipes' colours. The boxes
// come from a copy of the page with a script that writes them into its
// title (the page itself has none), read with --dump-dom; the script
// changes no layout.
func TestChromium(t *testing.T) {
	bin := chromium(t)
	page := goldenReport(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(path, page, 0o666))

	// The check catches console messages: a page with a bad SVG attribute
	// gives one.
	bad := filepath.Join(dir, "bad.html")
	require.NoError(t, os.WriteFile(bad, []byte(`<!DOCTYPE html><html><head><title>x</title></head><body>`+
		`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><polyline points="a,b"/></svg></body></html>`), 0o666))
	_, stderr := runChromium(t, bin, bad, 200, "--enable-logging=stderr", "--v=0", "--screenshot="+filepath.Join(dir, "bad.png"))
	require.Regexp(t, consoleRE, stderr, "Chromium logs console messages so")

	// Where the SVGs are.
	probe := filepath.Join(dir, "probe.html")
	script := `<script>addEventListener("load",function(){var r=[];document.querySelectorAll("svg").forEach(function(s){` +
		`var b=s.getBoundingClientRect();r.push({ID:s.id,X:b.left+scrollX,Y:b.top+scrollY,W:b.width,H:b.height,` +
		`PageH:document.documentElement.scrollHeight,PageW:document.documentElement.scrollWidth})});` +
		`document.title=JSON.stringify(r)})</script></body>`
	require.NoError(t, os.WriteFile(probe, bytes.Replace(page, []byte("</body>"), []byte(script), 1), 0o666))
	dom, _ := runChromium(t, bin, probe, 1000, "--dump-dom")
	m := regexp.MustCompile(`<title>(.*?)</title>`).FindStringSubmatch(dom)
	require.NotNil(t, m, "the probe's title in %.300s", dom)
	var boxes []box
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &boxes), m[1])
	require.Len(t, boxes, 5)
	height := int(boxes[0].PageH) + 1
	assert.LessOrEqual(t, boxes[0].PageW, float64(shotWidth), "no horizontal scrolling")

	// The screenshot, and the console.
	shot := filepath.Join(dir, "report.png")
	_, stderr = runChromium(t, bin, path, height, "--enable-logging=stderr", "--v=0", "--screenshot="+shot)
	assert.NotRegexp(t, consoleRE, stderr, "no console messages")
	if keep := os.Getenv("TCAST_REPORT_SCREENSHOT"); keep != "" {
		b, err := os.ReadFile(shot)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(keep, b, 0o666))
	}
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, img.Bounds().Dy(), height-1)

	for _, b := range boxes {
		r := image.Rect(int(b.X)+1, int(b.Y)+1, int(b.X+b.W)-1, int(b.Y+b.H)-1)
		require.True(t, r.In(img.Bounds()), "%s at %v inside the screenshot %v", b.ID, r, img.Bounds())
		bg := color.RGBA{0xff, 0xff, 0xff, 0xff}
		if strings.HasPrefix(b.ID, "mask") {
			bg = color.RGBA{0xf2, 0xf2, 0xf2, 0xff}
		}
		drawn := 0
		near := make([]int, len(palette))
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
				if c != bg {
					drawn++
				}
				for i, p := range palette[:3] {
					if dist(c, hexColour(p)) < 40 {
						near[i]++
					}
				}
			}
		}
		area := r.Dx() * r.Dy()
		assert.Greater(t, drawn, area/100, "%s: drawn pixels", b.ID)
		if strings.HasPrefix(b.ID, "mask") {
			// 2:4 keeps half: about half the cells dark, a quarter or more of the area.
			assert.Greater(t, drawn, area/4, "%s: mask cells", b.ID)
			continue
		}
		// Each recipe's line or outline shows in its colour.
		for i, n := range near[:3] {
			assert.Greater(t, n, 30, "%s: pixels of recipe %d's colour %s", b.ID, i, palette[i])
		}
	}
}

func hexColour(s string) color.RGBA {
	var c color.RGBA
	c.A = 0xff
	for i, dst := range []*uint8{&c.R, &c.G, &c.B} {
		v := 0
		for _, ch := range s[1+2*i : 3+2*i] {
			v *= 16
			switch {
			case ch >= '0' && ch <= '9':
				v += int(ch - '0')
			default:
				v += int(ch-'a') + 10
			}
		}
		*dst = uint8(v)
	}
	return c
}

func dist(a, b color.RGBA) int {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) + d(a.G, b.G) + d(a.B, b.B)
}
