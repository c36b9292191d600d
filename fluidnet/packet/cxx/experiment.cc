// fluidnet::Experiment: builds one packet-level scenario in ns-3, runs it, and keeps its traces.
//
// Topology: a chain of routers R0 - R1 - ... - RL joined by the L bottleneck links (a dumbbell is
// L = 1). Flow group g has its own source node S_g, attached to the router where its route
// starts, and its own sink node D_g, attached to the router after its last link, by access links
// whose delay makes the group's round-trip propagation delay. Each bottleneck link has the
// AQM of the scenario on its forward direction and a device queue of one packet (so the queue
// is the queue disc's); every other interface has a FIFO much larger than any queue that forms.
//
// Traces are sampled every dt: per link the packets in the queue disc, and its cumulative
// drops, marks, departed bytes and AQM state (PI: p; RCP: R/C; SBRM: m(b); AVQ: C~/C; ORED: the
// average queue; XCP: y/C of the last control interval); per long-lived flow its window and
// slow-start threshold (packets), last RTT sample (s), received bytes and lost data packets.
// Short flows record start and completion. A group's random losses drop its data packets on the
// access link into its sink. Every TCP data packet lost (in a queue or at random) is reported to
// its sender (TcpSender::PacketLost), one propagation delay of its path later.
//
// Options of a flow group (SetGroupOption): "profile_rate" and "profile_depth", an edge meter on
// its source's access link that tags the packets within a token bucket of that rate (bit/s) and
// depth (packets) "in" (fluidnet::ProfileMeterQueueDisc, for ORED); "xcp_sink", receivers that echo
// XCP's feedback (fluidnet::XcpSink); "stop", the time its flows stop sending.

namespace fluidnet
{
using namespace ns3;

// Where the network reports the TCP data packets it loses (fluidnet::Experiment).
class LossSink
{
  public:
    virtual ~LossSink() = default;
    virtual void DataPacketLost(Ipv4Address source, uint16_t port) = 0;
};

// Random (non-congestion) loss of a flow group: its sink's access link drops every received data
// packet (at least MinSize bytes on the wire, so not the handshake's or the ACKs' small packets)
// with probability Rate, independently, and reports it.
class DataLossModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::DataLossModel")
                                .SetParent<ErrorModel>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<DataLossModel>();
        return tid;
    }

    DataLossModel()
    {
        m_uv = CreateObject<UniformRandomVariable>();
    }

    void Setup(double rate, uint32_t minSize, LossSink* sink)
    {
        m_rate = rate;
        m_minSize = minSize;
        m_sink = sink;
    }

  protected:
    void DoDispose() override
    {
        m_uv = nullptr;
        ErrorModel::DoDispose();
    }

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        if (p->GetSize() < m_minSize || m_uv->GetValue() >= m_rate)
        {
            return false;
        }
        Ptr<Packet> copy = p->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        copy->RemoveHeader(ppp);
        copy->RemoveHeader(ip);
        copy->PeekHeader(tcp);
        m_sink->DataPacketLost(ip.GetSource(), tcp.GetSourcePort());
        return true;
    }

    void DoReset() override
    {
    }

    double m_rate{0.0};
    uint32_t m_minSize{0};
    LossSink* m_sink{nullptr};
    Ptr<UniformRandomVariable> m_uv;
};

NS_OBJECT_ENSURE_REGISTERED(DataLossModel);

class Experiment : public FlowLedger, public LossSink
{
  public:
    Experiment(uint32_t seed, uint32_t packetSize, uint32_t ackEvery, double minRto,
               uint32_t initialCwnd, double accessRate, uint32_t socketBuffer, bool ecnEndpoints)
        : m_packetSize(packetSize),
          m_accessRate(accessRate)
    {
        RngSeedManager::SetSeed(1);
        RngSeedManager::SetRun(seed);
        m_segment = packetSize - 52; // IP and TCP headers and the timestamp option
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(m_segment));
        Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(ackEvery));
        Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(socketBuffer));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(socketBuffer));
        Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecnEndpoints ? "On" : "Off"));
        m_routers.Create(1);
    }

    ~Experiment() override = default;

    // A bottleneck link from the last router to a new one, with the AQM `qdisc` (a TypeId
    // name) and its attributes given as text.
    void AddLink(double rate, double delay, const std::string& qdisc,
                 const std::vector<std::string>& names, const std::vector<std::string>& values)
    {
        m_routers.Create(1);
        uint32_t n = m_routers.GetN();
        Link link;
        link.rate = rate;
        link.delay = delay;
        link.qdisc = qdisc;
        link.names = names;
        link.values = values;
        link.from = n - 2;
        m_links.push_back(link);
    }

    // A group of flows from S_g to D_g over links first..last. kind is "tcp" or "rcp";
    // congestion is the TcpCongestionOps TypeId (tcp) with attributes as text; sizes[i] the
    // packets of flow i (0: long-lived, traced); starts[i] its start time; loss the probability
    // that a data packet is lost at random on its way to the sink.
    void AddGroup(const std::string& kind, const std::string& congestion,
                  const std::vector<std::string>& names, const std::vector<std::string>& values,
                  bool ecn, const std::string& sinkSocket, uint32_t first, uint32_t last,
                  double accessDelay, const std::vector<double>& starts,
                  const std::vector<double>& sizes, double loss)
    {
        Group g;
        g.kind = kind;
        g.congestion = congestion;
        g.names = names;
        g.values = values;
        g.ecn = ecn;
        g.sinkSocket = sinkSocket;
        g.first = first;
        g.last = last;
        g.accessDelay = accessDelay;
        g.starts = starts;
        g.sizes = sizes;
        g.loss = loss;
        m_groups.push_back(g);
    }

    // An option of group `group` (see the top of this file).
    void SetGroupOption(uint32_t group, const std::string& key, double value)
    {
        m_groups.at(group).options[key] = value;
    }

    // nSamples samples at i dt, i = 0 .. nSamples - 1 (the last at tEnd): sampling stops
    // there, whatever the stop's slack lets run after tEnd
    void Run(double tEnd, double dt, uint64_t nSamples)
    {
        Build();
        m_dt = dt;
        m_maxSamples = nSamples;
        Simulator::Schedule(Seconds(0.0), &Experiment::Sample, this);
        Simulator::Stop(Seconds(tEnd) + MicroSeconds(1));
        Simulator::Run();
        m_events = Simulator::GetEventCount();
        flowDone = m_done;
        Simulator::Destroy();
    }

    // FlowLedger (RCP receivers) and the TCP sinks' receive trace.
    void Received(uint32_t flow, uint32_t bytes, bool complete) override
    {
        m_rxBytes[flow] += bytes;
        if (complete && std::isnan(m_done[flow]))
        {
            m_done[flow] = Simulator::Now().GetSeconds();
        }
    }

    // LossSink: the sender of a lost data packet hears of it (the paper's negative acknowledgment)
    // when it would see the loss, the one-way propagation delay of its path later.
    void DataPacketLost(Ipv4Address source, uint16_t port) override
    {
        auto it = m_senders.find(std::make_pair(source.Get(), port));
        if (it != m_senders.end())
        {
            const Sender& s = it->second;
            m_lost[s.flow] += 1;
            Simulator::Schedule(Seconds(s.oneWay), &TcpSender::PacketLost, s.app);
        }
    }

    // A bottleneck queue disc dropped a packet: report it if it carries TCP data.
    static void QueueDrop(Experiment* self, Ptr<const QueueDiscItem> item)
    {
        Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
        if (!ipItem || ipItem->GetHeader().GetProtocol() != TcpL4Protocol::PROT_NUMBER)
        {
            return;
        }
        TcpHeader tcp;
        Ptr<Packet> p = ipItem->GetPacket()->Copy();
        uint32_t headerBytes = p->PeekHeader(tcp);
        if (p->GetSize() > headerBytes)
        {
            self->DataPacketLost(ipItem->GetHeader().GetSource(), tcp.GetSourcePort());
        }
    }

    static void SinkRx(Experiment* self, uint32_t group, Ptr<const Packet> p, const Address& from,
                       const Address& to)
    {
        uint16_t port = InetSocketAddress::ConvertFrom(from).GetPort();
        uint32_t flow = self->m_groups[group].offset + (port - kFirstPort);
        self->m_rxBytes[flow] += p->GetSize();
        if (self->m_target[flow] > 0 && self->m_rxBytes[flow] >= self->m_target[flow] &&
            std::isnan(self->m_done[flow]))
        {
            self->m_done[flow] = Simulator::Now().GetSeconds();
        }
    }

    // results (read from Python after Run)
    std::vector<double> times;      // sample times
    std::vector<double> queue;      // [time, link] packets in the queue disc
    std::vector<double> drops;      // [time, link] cumulative drops
    std::vector<double> marks;      // [time, link] cumulative ECN marks
    std::vector<double> departed;   // [time, link] cumulative bytes sent on the link
    std::vector<double> aqmState;   // [time, link] p (PI), R/C (RCP), m(b) (SBRM), C~/C (AVQ),
                                    // average queue (ORED), y/C of the last interval (XCP),
                                    // else NaN
    std::vector<double> cwnd;       // [time, traced flow] window (packets) or RCP rate (pkts/s)
    std::vector<double> rtt;        // [time, traced flow] last RTT sample (s)
    std::vector<double> rx;         // [time, traced flow] cumulative received bytes
    std::vector<double> ssthresh;   // [time, traced flow] slow-start threshold (packets)
    std::vector<double> lost;       // [time, traced flow] cumulative data packets lost (TCP)
    std::vector<double> flowStart;  // per flow
    std::vector<double> flowSize;   // per flow (packets; 0 = long-lived)
    std::vector<double> flowDone;   // per flow completion time (NaN: not finished)
    std::vector<int> flowGroup;     // per flow
    std::vector<uint32_t> tracedFlows; // flow index of each traced column
    uint64_t m_events{0};

    uint64_t GetEvents() const
    {
        return m_events;
    }

  private:
    static constexpr uint16_t kFirstPort = 10000;
    static constexpr uint16_t kSinkPort = 9;

    struct Link
    {
        double rate;
        double delay;
        std::string qdisc;
        std::vector<std::string> names, values;
        uint32_t from;
        Ptr<QueueDisc> disc;
    };

    struct Group
    {
        std::string kind, congestion, sinkSocket;
        std::vector<std::string> names, values;
        bool ecn;
        uint32_t first, last;
        double accessDelay;
        std::vector<double> starts, sizes;
        double loss{0.0};
        std::map<std::string, double> options;
        uint32_t offset{0};
        Ptr<Node> src, dst;
    };

    void InstallFifo(Ptr<NetDevice> dev)
    {
        TrafficControlHelper tch;
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000000p")));
        tch.Install(dev);
    }

    Ipv4Address Connect(Ptr<Node> a, Ptr<Node> b, double rate, double delay, Link* link)
    {
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(std::llround(rate)))));
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
        if (link != nullptr)
        {
            p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1p")));
        }
        NetDeviceContainer d = p2p.Install(a, b);
        if (link != nullptr)
        {
            TrafficControlHelper tch;
            tch.SetRootQueueDisc(link->qdisc);
            link->disc = tch.Install(d.Get(0)).Get(0);
            for (size_t i = 0; i < link->names.size(); ++i)
            {
                link->disc->SetAttribute(link->names[i], StringValue(link->values[i]));
            }
            link->disc->TraceConnectWithoutContext("Drop",
                                                   MakeBoundCallback(&Experiment::QueueDrop, this));
        }
        else
        {
            InstallFifo(d.Get(0));
        }
        InstallFifo(d.Get(1));
        Ipv4InterfaceContainer ifs = m_addresses.Assign(d);
        m_addresses.NewNetwork();
        return ifs.GetAddress(1);
    }

    void Build()
    {
        InternetStackHelper stack;
        stack.Install(m_routers);
        m_addresses.SetBase("10.0.0.0", "255.255.255.252");
        for (auto& link : m_links)
        {
            Connect(m_routers.Get(link.from), m_routers.Get(link.from + 1), link.rate, link.delay,
                    &link);
        }
        uint32_t flows = 0;
        for (auto& g : m_groups)
        {
            g.offset = flows;
            flows += g.sizes.size();
        }
        m_rxBytes.assign(flows, 0.0);
        m_lost.assign(flows, 0.0);
        m_done.assign(flows, std::numeric_limits<double>::quiet_NaN());
        m_target.assign(flows, 0.0);
        for (uint32_t gi = 0; gi < m_groups.size(); ++gi)
        {
            BuildGroup(gi);
        }
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
        // traced flows in the order their traces are sampled: TCP ones, then RCP ones
        tracedFlows = m_tcpTracedFlows;
        tracedFlows.insert(tracedFlows.end(), m_rcpTracedFlows.begin(), m_rcpTracedFlows.end());
    }

    void BuildGroup(uint32_t gi)
    {
        Group& g = m_groups[gi];
        NodeContainer ends;
        ends.Create(2);
        InternetStackHelper stack;
        stack.Install(ends);
        g.src = ends.Get(0);
        g.dst = ends.Get(1);
        if (g.kind == "tcp")
        {
            g.dst->GetObject<TcpL4Protocol>()->SetAttribute(
                "SocketType",
                TypeIdValue(TypeId::LookupByName(g.sinkSocket)));
        }
        Connect(g.src, m_routers.Get(g.first), m_accessRate, g.accessDelay, nullptr);
        if (g.options.count("profile_rate"))
        {
            InstallProfileMeter(g);
        }
        Ipv4Address sinkAddress =
            Connect(m_routers.Get(g.last + 1), g.dst, m_accessRate, g.accessDelay, nullptr);
        if (g.loss > 0)
        {
            Ptr<DataLossModel> em = CreateObject<DataLossModel>();
            em->Setup(g.loss, m_packetSize, this); // data packets: packetSize bytes and PPP's
            DynamicCast<PointToPointNetDevice>(g.dst->GetDevice(1))->SetReceiveErrorModel(em);
        }
        Ipv4Address sourceAddress = g.src->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
        double oneWay = 2 * g.accessDelay;
        for (uint32_t k = g.first; k <= g.last; ++k)
        {
            oneWay += m_links[k].delay;
        }

        Address remote = InetSocketAddress(sinkAddress, kSinkPort);
        if (g.kind == "tcp")
        {
            Ptr<Application> app;
            if (g.options.count("xcp_sink"))
            {
                Ptr<XcpSink> xcp = CreateObject<XcpSink>();
                xcp->Setup(kSinkPort);
                g.dst->AddApplication(xcp);
                app = xcp;
            }
            else
            {
                PacketSinkHelper sink("ns3::TcpSocketFactory",
                                      InetSocketAddress(Ipv4Address::GetAny(), kSinkPort));
                app = sink.Install(g.dst).Get(0);
            }
            app->SetStartTime(Seconds(0.0));
            app->TraceConnectWithoutContext("RxWithAddresses",
                                            MakeBoundCallback(&Experiment::SinkRx, this, gi));
        }
        else
        {
            Ptr<RcpReceiver> receiver = CreateObject<RcpReceiver>();
            receiver->Setup(kSinkPort, this, Payload());
            g.dst->AddApplication(receiver);
            receiver->SetStartTime(Seconds(0.0));
        }

        ObjectFactory congestion;
        if (g.kind == "tcp")
        {
            congestion.SetTypeId(g.congestion);
            for (size_t i = 0; i < g.names.size(); ++i)
            {
                congestion.Set(g.names[i], StringValue(g.values[i]));
            }
        }
        for (uint32_t i = 0; i < g.sizes.size(); ++i)
        {
            uint32_t flow = g.offset + i;
            uint16_t port = kFirstPort + i;
            double size = g.sizes[i];
            Ptr<Application> app;
            if (g.kind == "tcp")
            {
                Ptr<TcpSender> s = CreateObject<TcpSender>();
                uint64_t bytes = uint64_t(size) * m_segment;
                s->Setup(remote, port, bytes, congestion, g.ecn);
                m_senders[std::make_pair(sourceAddress.Get(), port)] = Sender{s, oneWay, flow};
                m_target[flow] = double(bytes);
                if (size == 0)
                {
                    m_tcpTraced.push_back(s);
                    m_tcpTracedFlows.push_back(flow);
                }
                app = s;
            }
            else
            {
                Ptr<RcpSender> s = CreateObject<RcpSender>();
                s->Setup(remote, port, flow, uint32_t(size), Payload());
                if (size == 0)
                {
                    m_rcpTraced.push_back(s);
                    m_rcpTracedFlows.push_back(flow);
                }
                app = s;
            }
            g.src->AddApplication(app);
            app->SetStartTime(Seconds(g.starts[i]));
            if (g.options.count("stop"))
            {
                app->SetStopTime(Seconds(g.options["stop"]));
            }
            flowStart.push_back(g.starts[i]);
            flowSize.push_back(size);
            flowGroup.push_back(int(gi));
        }
    }

    // The edge meter of a group with an assured rate: replaces the FIFO of its source's access
    // link (the source's only device besides the loopback).
    void InstallProfileMeter(Group& g)
    {
        Ptr<NetDevice> dev = g.src->GetDevice(1);
        g.src->GetObject<TrafficControlLayer>()->DeleteRootQueueDiscOnDevice(dev);
        TrafficControlHelper tch;
        tch.SetRootQueueDisc("fluidnet::ProfileMeterQueueDisc",
                             "Rate",
                             DoubleValue(g.options["profile_rate"]),
                             "Depth",
                             DoubleValue(g.options.count("profile_depth")
                                             ? g.options["profile_depth"]
                                             : 20.0),
                             "PacketSize",
                             UintegerValue(m_packetSize),
                             "MaxSize",
                             QueueSizeValue(QueueSize("1000000p")));
        tch.Install(dev);
    }

    uint32_t Payload() const
    {
        return m_packetSize - 28; // IP and UDP headers
    }

    void Sample()
    {
        times.push_back(Simulator::Now().GetSeconds());
        for (auto& link : m_links)
        {
            const QueueDisc::Stats& st = link.disc->GetStats();
            queue.push_back(link.disc->GetNPackets());
            drops.push_back(st.nTotalDroppedPackets);
            marks.push_back(st.nTotalMarkedPackets);
            departed.push_back(double(st.nTotalSentBytes));
            aqmState.push_back(AqmState(link.disc));
        }
        for (auto& s : m_tcpTraced)
        {
            cwnd.push_back(s->GetCwnd() / m_segment);
            rtt.push_back(s->GetRtt());
            ssthresh.push_back(s->GetSsThresh() / m_segment);
        }
        for (auto& s : m_rcpTraced)
        {
            cwnd.push_back(s->GetRate() / (8.0 * m_packetSize));
            rtt.push_back(s->GetRtt());
            ssthresh.push_back(std::numeric_limits<double>::quiet_NaN());
        }
        for (uint32_t f : tracedFlows)
        {
            rx.push_back(m_rxBytes[f]);
            lost.push_back(m_lost[f]);
        }
        ++m_samples;
        if (m_samples < m_maxSamples)
        {
            Simulator::Schedule(Seconds(m_dt * m_samples) - Simulator::Now(), &Experiment::Sample,
                                this);
        }
    }

    static double AqmState(Ptr<QueueDisc> disc)
    {
        if (auto pi = DynamicCast<PiQueueDisc>(disc))
        {
            return pi->GetProbability();
        }
        if (auto rcp = DynamicCast<RcpQueueDisc>(disc))
        {
            return rcp->GetNormalizedRate();
        }
        if (auto sbrm = DynamicCast<SbrmQueueDisc>(disc))
        {
            return sbrm->GetMarkProbability();
        }
        if (auto avq = DynamicCast<AvqQueueDisc>(disc))
        {
            return avq->GetNormalizedLevel();
        }
        if (auto ored = DynamicCast<OredQueueDisc>(disc))
        {
            return ored->GetAverage();
        }
        if (auto xcp = DynamicCast<XcpQueueDisc>(disc))
        {
            return xcp->GetLoad();
        }
        return std::numeric_limits<double>::quiet_NaN();
    }

    uint32_t m_packetSize;
    uint32_t m_segment;
    double m_accessRate;
    double m_dt{0.01};
    uint64_t m_samples{0};
    uint64_t m_maxSamples{0};
    NodeContainer m_routers;
    Ipv4AddressHelper m_addresses;
    std::vector<Link> m_links;
    std::vector<Group> m_groups;
    std::vector<Ptr<TcpSender>> m_tcpTraced;
    std::vector<Ptr<RcpSender>> m_rcpTraced;
    std::vector<uint32_t> m_tcpTracedFlows;
    std::vector<uint32_t> m_rcpTracedFlows;
    std::vector<double> m_rxBytes;
    std::vector<double> m_done;
    std::vector<double> m_target;
    // (source address, port) of every TCP flow -> its sender, the one-way delay of its path, its
    // flow index
    struct Sender
    {
        Ptr<TcpSender> app;
        double oneWay;
        uint32_t flow;
    };
    std::map<std::pair<uint32_t, uint16_t>, Sender> m_senders;
    std::vector<double> m_lost;
};

} // namespace fluidnet
