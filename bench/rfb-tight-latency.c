/*
 * rfb-tight-latency: the viewer and the painter behind
 * bench/screen-tight.sh, in one process (one clock).  A libvncclient
 * viewer asking noVNC's encodings (Tight, JPEG quality 6, compression 2,
 * CopyRect, cursor shapes) connects over TCP to HOST:PORT (guestd's debug
 * port, or x11vnc); the painter covers a window (the whole 1280x800
 * screen, or 384x288 with WINDOW 1) with a busy picture that moves every
 * frame, FPS times a second for S seconds, with the frame's number
 * (mod 32) in the red of a flat square at its centre.  After each update
 * the viewer reads the square to know which paint arrived.  Prints
 *
 *   paint-start
 *   paint-end paints=N seen=N lat_median_us=N lat_p95_us=N
 *
 * (seen: paints whose number reached the viewer; latency from the paint
 * being on the X server, XSync, to the end of the update carrying it).
 *
 *   rfb-tight-latency HOST:PORT FPS S [WINDOW]
 * Uses DISPLAY and XAUTHORITY.  Built by `make benchmarks`; not installed.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <rfb/rfbclient.h>
static uint64_t us(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000ull+t.tv_nsec/1000;}
static int seen=-1; static uint64_t tp[100000]; static int lat[100000], nlat; static int mx, my, W=1280,H=800;
static void got(rfbClient*cl,int x,int y,int w,int h){ if(mx>=x&&mx<x+w&&my>=y&&my<y+h){ uint8_t*p=cl->frameBuffer+((size_t)my*cl->width+mx)*4; int s=(p[0]+4)/8; /* red carries seq%32 *8 */ (void)s; } }
static void fin(rfbClient*cl){ uint8_t*p=cl->frameBuffer+((size_t)my*cl->width+mx)*4; int v=(p[0]+4)/8%32; (void)v; extern int cur; int c=cur; for(int k=c;k>=0&&k>c-32;k--) if(k%32==v && k>seen){ seen=k; lat[nlat++]=(int)(us()-tp[k]); break;} }
int cur=-1;
static int cmp(const void*a,const void*b){return *(int*)a-*(int*)b;}
static void q(const char*f,...){(void)f;}
int main(int argc,char**argv){ char host[64]; snprintf(host,64,"%s",argv[1]); char*c=strrchr(host,':');*c=0; int fps=atoi(argv[2]), secs=atoi(argv[3]); int mode=argc>4?atoi(argv[4]):0; /* 0 full, 1 window 384x288 */
 Display*d=XOpenDisplay(NULL); rfbClientLog=q; rfbClientErr=q; rfbClient*cl=rfbGetClient(8,3,4); free(cl->serverHost); cl->serverHost=strdup(host); cl->serverPort=atoi(c+1);
 cl->GotFrameBufferUpdate=got; cl->FinishedFrameBufferUpdate=fin; cl->appData.encodingsString="tight copyrect"; cl->appData.enableJPEG=TRUE; cl->appData.qualityLevel=6; cl->appData.compressLevel=2; cl->appData.useRemoteCursor=TRUE;
 if(!rfbInitClient(cl,NULL,NULL)){printf("connect-failed\n");return 3;}
 int ww=mode?384:W, wh=mode?288:H; mx=ww/2; my=wh/2;
 XSetWindowAttributes wa; wa.override_redirect=True; Window win=XCreateWindow(d,DefaultRootWindow(d),0,0,ww,wh,0,CopyFromParent,InputOutput,CopyFromParent,CWOverrideRedirect,&wa); GC gc=XCreateGC(d,win,0,NULL); XMapRaised(d,win); XSync(d,False);
 XImage*img=XCreateImage(d,DefaultVisual(d,0),24,ZPixmap,0,malloc((size_t)ww*wh*4),ww,wh,32,0);
 uint64_t t0=us(), next=t0, period=1000000/fps; int n=0;
 printf("paint-start\n"); fflush(stdout);
 while(us()-t0 < (uint64_t)secs*1000000){
  uint64_t now=us();
  if(now>=next){ cur++; for(int y=0;y<wh;y++)for(int x=0;x<ww;x++){ unsigned v=(unsigned)(((x+cur*8)/64*40)%256)<<16|(unsigned)(((y+cur*4)/48*50)%256)<<8|(unsigned)(((x+y+cur*16)/8)%256); if(abs(x-mx)<24&&abs(y-my)<24) v=(unsigned)((cur%32)*8)<<16|0x8080; XPutPixel(img,x,y,v);} XPutImage(d,win,gc,img,0,0,0,0,ww,wh); XSync(d,False); tp[cur]=us(); next+=period; n++; }
  int r=WaitForMessage(cl,1000); if(r<0)break; if(r>0&&!HandleRFBServerMessage(cl))break;
 }
 qsort(lat,nlat,sizeof lat[0],cmp);
 printf("paint-end paints=%d seen=%d lat_median_us=%d lat_p95_us=%d\n",n,nlat,nlat?lat[nlat/2]:0,nlat?lat[nlat*95/100]:0);
 return 0;}
